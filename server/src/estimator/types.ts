import type { How } from '../engine/program/values';
import type { KeptOutputSite } from './kept-outputs';
import type { AudioEncoderSpec } from './speech';
import type { DerivativeActivation } from './derivative-graphs';

// Plain data types of the memory estimator. Every size is in bytes and per GPU.
// Lines are 0-based inside the library (as tree-sitter and LSP count); the CLI's JSON adds 1.

export type Precision = 'fp32' | 'fp16-amp' | 'bf16-amp' | 'bf16' | 'fp16';
export type OptimizerKind = 'sgd' | 'sgd-momentum' | 'adam' | 'adamw' | 'adafactor' | 'adam-8bit' | 'rmsprop' | 'adagrad' | 'adadelta' | 'sparse-adam' | 'lbfgs';
/** The activation a create_graph derivative goes through (derivative-graphs.ts says what each keeps). */
export type { DerivativeActivation } from './derivative-graphs';
/** torch.optim.LBFGS's default history_size. */
export const LBFGS_DEFAULT_HISTORY = 100;
/** How torch.optim runs step(): foreach (the CUDA default) keeps one parameter-sized temporary. */
export type OptimizerImpl = 'foreach' | 'fused' | 'for-loop';
/** The CLI's --strategy values (spec/cli.md); `fsdp` is FSDP's FULL_SHARD. */
export type Strategy = 'ddp' | 'fsdp' | 'zero1' | 'zero2' | 'zero3';
/**
 * The estimator's own strategy values: the CLI's, plus FSDP's SHARD_GRAD_OP (FSDP2 `reshard_after_forward=False`),
 * which is found only in the script's source, and `none` for a script that wraps nothing on one GPU.
 */
export type ShardingStrategy = 'none' | Strategy | 'fsdp-grad-op';
export type AttentionImpl = 'sdpa' | 'eager' | 'flash_attention_2';
/** train: forward+backward+step; infer-no-grad: eval under torch.no_grad(); infer-grad: eval that still builds graphs. */
export type RunMode = 'train' | 'infer-no-grad' | 'infer-grad';
export type WeightDtype = 'fp32' | 'bf16' | 'fp16';

export type TransformerFamily =
  | 'gpt2' | 'bert' | 'distilbert' | 'deberta' | 'llama' | 'opt' | 'phi' | 'gemma'
  | 't5' | 'vit' | 'clip' | 'whisper' | 'bart' | 'gpt_neox' | 'wav2vec2' | 'albert';

export type TransformerTask = 'causal-lm' | 'masked-lm' | 'seq-cls' | 'seq2seq' | 'image-cls' | 'contrastive' | 'speech-seq2seq' | 'ctc' | 'base';

/** The public config.json facts of a Hugging Face transformer, plus how its modelling code is written. */
export interface TransformerSpec {
  kind: 'transformer';
  family: TransformerFamily;
  hidden: number;
  layers: number;
  heads: number;
  kvHeads: number;
  /** Attention width per head; hidden / heads unless the config says otherwise (Gemma, T5). */
  headDim: number;
  intermediate: number;
  vocab: number;
  maxPositions: number;
  tiedEmbeddings: boolean;
  /** torch_dtype of the checkpoint: transformers 5 loads from_pretrained weights in it when the script names none. */
  storedDtype: WeightDtype;
  norm: 'layernorm' | 'rmsnorm';
  /** 'post' for BERT-style blocks (LayerNorm after the residual add), 'parallel' for Phi-2 (attention and MLP share one norm). */
  normPlacement: 'pre' | 'post' | 'parallel';
  qkvFused: boolean;
  /** quick_gelu: CLIP's x * sigmoid(1.702 x), written in Python (keeps the input, the sigmoid and the product). */
  mlp: 'gelu' | 'gelu_new' | 'quick_gelu' | 'relu' | 'swiglu' | 'geglu';
  /** Bias vectors on attention projections: all four, q/k/v only, or none. */
  attnBias: 'all' | 'qkv' | 'none';
  mlpBias: boolean;
  /** Dropout probability > 0 after attention and MLP outputs (masks are saved for backward). */
  hiddenDropout: boolean;
  /**
   * A dropout on the MLP's activation too (torchvision ViT's MLPBlock with `dropout=`, timm's Mlp with
   * `proj_drop_rate=`): a bool mask of the intermediate width. Wav2Vec2's activation_dropout goes with `audio`.
   */
  activationDropout?: boolean;
  attnDropout: boolean;
  positions: 'learned' | 'rotary' | 'relative' | 'none';
  /**
   * Marian: each stack's position table is sinusoidal, max_position_embeddings rows with no offset (parameters
   * that never train), and neither stack has a LayerNorm on its embeddings.
   */
  sinusoidalPositionTables?: boolean;
  typeVocab: number;
  pooler: boolean;
  /** Extra norms per layer beyond the two every block has (Gemma 2 has four). */
  extraNormsPerLayer: number;
  /** Gemma 2's final_logit_softcapping: logits / cap, tanh, * cap (tanh keeps a logits-sized output). */
  finalLogitSoftcap?: boolean;
  /** Encoder-decoder: decoder layer count (T5, Whisper); 0 for encoder-only or decoder-only. */
  decoderLayers: number;
  /** Vision transformers: image size and patch size of the config. */
  imageSize?: number;
  patchSize?: number;
  /**
   * timm ViTs: the tokens before the patches (the class token; DeiT's distilled models add a distillation token,
   * with its own classifier, whose output is averaged with the class token's). Absent: the class token alone.
   */
  prefixTokens?: number;
  /**
   * Two prefix tokens and one classifier: transformers' DeiTForImageClassification classifies the class token alone,
   * AST the mean of both (behind a LayerNorm).
   */
  singleClassifier?: boolean;
  /** timm's `no_embed_class` (DeiT-III): the position table covers the patches only, not the prefix tokens. */
  positionsWithoutPrefix?: boolean;
  /**
   * AST (ASTConfig): the ViT runs over a spectrogram of `frames` x `melBins` (fp32, one channel), whose overlapping
   * patches the config fixes whatever the input's size; its two prefix tokens share one classifier, behind a LayerNorm.
   */
  spectrogram?: { frames: number; melBins: number; patches: number };
  /**
   * timm's LayerScale on both residual branches of every block (DeiT-III's `init_values`): a per-channel gain, whose
   * multiplication keeps the branch's output for backward.
   */
  layerScale?: boolean;
  /**
   * timm's BEiT: each block's relative position bias table (this many rows, `(2 x side - 1)^2 + 3`, a column per
   * head) in place of an absolute position table; the fused qkv has a bias on q and v, none on k.
   */
  relativePositionRows?: number;
  /** CLIP: the vision tower of a two-tower model. */
  vision?: TransformerSpec;
  projectionDim?: number;
  /**
   * ViT-MAE: the share of patches masked out (the encoder sees the others and the class token) and the decoder
   * stack, which runs over every patch.
   */
  maskRatio?: number;
  decoder?: TransformerSpec;
  /**
   * VisionEncoderDecoderModel: this spec is the text decoder, whose every layer has a cross-attention over the
   * output of this image encoder (a base model with its pooler, as AutoModel builds it). Where the widths differ,
   * a linear projects the encoder's output to the decoder's.
   */
  crossEncoder?: TransformerSpec;
  /** Whisper: mel bins and encoder frames. */
  melBins?: number;
  encoderFrames?: number;
  /**
   * Wav2Vec2 / HuBERT: the convolutional feature encoder and positional convolution before the encoder. The step's
   * sequence length is then the waveform's samples, and the encoder runs over the frames they give.
   */
  audio?: AudioEncoderSpec;
  /** OPT-350m projects embeddings from a smaller width. */
  embedProjection?: number;
  /**
   * ALBERT's factorised embeddings: the token, position and type tables (and their LayerNorm) are this wide
   * (`embedding_size`), a linear maps them to the hidden size, and the masked-LM head maps back to it.
   */
  embeddingSize?: number;
  /**
   * ALBERT's cross-layer sharing: the layers whose weights exist (num_hidden_groups x inner_group_num). The stack
   * still runs `layers` of them, each keeping its own activations, while the parameters are those of these alone.
   */
  storedLayers?: number;
  task: TransformerTask;
  numLabels: number;
  /**
   * A multiple-choice head (`…ForMultipleChoice`): the step gives (batch, choices, tokens) ids, which the model
   * flattens to batch x choices sequences, each scored by a one-label classifier.
   */
  multipleChoice?: boolean;
}

/**
 * A named top-level submodule of a layer net (torchvision's `conv1`, `layer1`, `features`; the classifier head), with
 * the net's running totals where it starts: what a frozen prefix ending there leaves out (layers.withFrozenPrefix).
 */
export interface LayerPart {
  name: string;
  parametersBefore: number;
  /** BatchNorm weights before it: buffers where a detector's backbone has FrozenBatchNorm2d. */
  normParametersBefore: number;
  castParametersBefore: number;
  savedBefore: number;
  fixedBytesBefore: number;
  fp32UnderAutocastBefore: number;
  /** The most elements alive at once in a no-grad forward of the layers before it. */
  liveBefore: number;
  /** The most elements alive at once in a no-grad forward of its own layers (a frozen part fed by the data). */
  liveWithin?: number;
  /** Convolutions from the part on. */
  convolutionsFrom: number;
  /** The tensor it reads, and whether a layer before it already counted that tensor as kept. */
  inputElements: number;
  /** The tensor it reads, per sample: (C, H, W) of an image, (features) of a vector. */
  inputDims: number[];
  inputCounted: boolean;
  /** Whether the part's own layers keep the tensor it reads (its first convolution or BatchNorm does). */
  keepsInput: boolean;
  /** The part makes no tensor of its own (an in-place ReLU): what it returns is what it reads. */
  returnsInput?: boolean;
  /** The largest tensor the ops from the part on make. */
  largestFrom: number;
}

/** A network described layer by layer (torchvision/timm catalog entries and nn.Module classes found in the script). */
export interface LayerNetSpec {
  kind: 'layers';
  /** Parameters, counted from the layers. */
  parameters: number;
  /** Elements saved for backward per sample, at the reference input size (activation dtype). */
  savedElementsPerSample: number;
  /**
   * The script's forward() could not be followed with shaped tensors (under no input tried): what it keeps comes
   * from the layers in registration order alone, which misses functional operations, skips and reshapes.
   */
  forwardUntraced?: boolean;
  /**
   * The largest map the layer walk made, as a multiple of the input image's area: above 1 where it upsamples past
   * the input's size (a super-resolution net's 4x output is 16).
   */
  mapGrowth?: number;
  /**
   * Operations forward() calls that the trace does not model (`torch.cdist`, `Tensor.scatter_reduce`): their outputs
   * were taken at their input's shape and what they keep was not counted, so the estimate says so.
   */
  unmodelledOps?: string[];
  /**
   * Sequences packed before a recurrent layer (pack_padded_sequence), counted over their real tokens: the draw of
   * their lengths, the mean length of a sample and the length the batch is padded to.
   */
  packedLengths?: { least: number; most: number; mean: number; padded: number };
  /**
   * Numbers the step's call gives forward that the script draws at random (`int(torch.randint(64, 97, (1,)))`, how
   * many update steps to unroll): forward was traced at the largest (`most`), the draw's 0-based line.
   */
  drawnArguments?: Array<{ least: number; most: number; line: number }>;
  /** Bytes per sample that keep their dtype under AMP (max-pool indices, dropout masks). */
  fixedBytesPerSample: number;
  /**
   * Elements of the weights weight_norm / spectral_norm make anew at each call of a layer (g * v / ||v||), which the
   * layer keeps for its input's gradient whatever the batch: one set per forward before the backward.
   */
  reparametrizedWeightElements?: number;
  /**
   * What the step's own code keeps per sample of what the model returns (a feature-matching loss's differences,
   * feature maps an earlier call's names still hold; see step-returned-outputs.ts): once a step, however many
   * forwards feed it.
   */
  stepKeptElementsPerSample?: number;
  /** Of stepKeptElementsPerSample, those in fp32 under autocast (a loss over `logits.float()`): 4 bytes each. */
  stepKeptFp32ElementsPerSample?: number;
  /**
   * The step's loss over the output, traced, calls no cross-entropy (a hand-written transducer loss): what it keeps
   * (stepKeptElementsPerSample) is the loss's, in place of the log-softmax counted for a cross-entropy by default.
   */
  stepLossInPlaceOfOutputLoss?: boolean;
  /**
   * Gradients the step's loss makes at backward's start beside a cross-entropy's, for what it keeps with history
   * besides (a Dice term's softmax), per sample: elements, and of them those in fp32 under autocast.
   */
  stepLossExtraGradientsPerSample?: { elements: number; fp32: number };
  /**
   * The gradients of the returned tensors that step's loss reads, made at once when its backward runs first, over
   * what the loss kept (freed then), per sample: a transient early in backward.
   */
  stepLossGradientElementsPerSample?: number;
  /** Largest single activation tensor per sample, for backward transients. */
  largestElementsPerSample: number;
  /** Elements of the network's output per sample (the logits a loss reads). */
  outputElementsPerSample: number;
  /**
   * A forward that returns a tuple: each element's elements per sample, and whether it is fp32 under autocast (an
   * attention map out of softmax). What a leak of one element (`logits, attn = model(x)` keeping attn) keeps.
   */
  outputPartsPerSample?: Array<{ elements: number; fullPrecision: boolean }>;
  /**
   * The output is a tensor forward itself keeps for backward (log_softmax's result, which nll_loss reads): holding
   * it costs nothing more, and the loss on log-probabilities keeps no logits-sized tensor of its own.
   */
  outputKeptByForward?: boolean;
  /**
   * Elements per sample of what the model returns, where the loss reads a larger tensor made from it (SegFormer's
   * logits at a quarter of the image's side, resized to the labels' size inside its loss): what holding the output
   * keeps. Absent: the output the loss reads.
   */
  returnedOutputElementsPerSample?: number;
  /**
   * Bytes of the tensors the step gives the model for one sample, where its loader's dataset makes them (node
   * features, an adjacency and a mask beside each other): alive through the step. Absent: the first layer's input.
   */
  stepInputBytesPerSample?: number;
  /**
   * forward() was traced on the step's inputs at the sizes the script makes them (for models trained together, each
   * on its own): no input size is assumed for it. Absent: a size was given or guessed.
   */
  inputFromData?: boolean;
  /**
   * The length of the token ids the trace gave the step's other arguments where it differs from the input's (an
   * encoder-decoder's decoder input, `tgt[:, :-1]` applied): the decoder's sequence (traced nets).
   */
  targetTokens?: number;
  /** Whether the net has convolutions (cuDNN takes a workspace in their backward). */
  hasConvolution: boolean;
  /** Elements alive at once at the worst point of a no-grad forward, per sample. */
  inferenceLiveElementsPerSample: number;
  /**
   * The most bytes a training forward holds at once over what it keeps for backward when it ends, per sample, in
   * each activation mode (see ActivationMode): temporaries its locals hold until the function returns (the int64
   * index arithmetic of a hash encoding) beside what earlier ops kept. Traced nets only.
   */
  forwardLiveExcessBytesPerSample?: { fp32: number; half: number; amp: number };
  /**
   * What the loop hands back from one step's forward to the next (a Transformer-XL's memory, an RNN's hidden state),
   * per sample: its storage's float elements (those fp32 under autocast among them) and integer bytes. Alive through
   * the whole step, like its inputs. Traced nets whose step carries state only.
   */
  carriedStatePerSample?: { floats: number; fullPrecisionFloats: number; integerBytes: number };
  /** Saved elements of each top-level block, for checkpointing segments. */
  blockSavedElements: number[];
  /** Input elements of each top-level block (what a checkpoint keeps). */
  blockInputElements: number[];
  /**
   * Whether each block's input is fp32 under autocast (traced nets): a residual stream that an embedding's fp32
   * output feeds stays fp32 (fp32 + half adds to fp32), and a checkpoint keeps it at 4 bytes.
   */
  blockInputFullPrecision?: boolean[];
  /**
   * cross_entropy reads fp32 logits (traced nets): under autocast where forward hands it an fp32 tensor, on half
   * weights where the script casts the logits itself (`logits.float()`); the loss then costs what it does in fp32.
   */
  lossInputFp32?: { autocast: boolean; explicit: boolean };
  /** forward computes the cross-entropy loss itself (traced nets): what torch.compile fuses with the loss's backward. */
  lossInForward?: boolean;
  /** Saved elements outside the blocks that forward made before each block (traced nets): alive while it is recomputed. */
  blockOutsideBeforeElements?: number[];
  /**
   * The most each block holds at once in its own backward, per sample (traced nets): what it kept before an op plus
   * that op's gradients and temporaries, in elements and in bytes under autocast. A recomputed block holds it.
   */
  blockBackwardPeakElements?: number[];
  blockBackwardPeakAutocastBytes?: number[];
  /** Elements of block outputs that layers outside the blocks keep (traced nets): alive under checkpointing too. */
  blockOutputsKeptOutsideElements?: number;
  /** Elements alive at the worst point of backward, per sample, from the layer order (traced nets). */
  backwardPeakElementsPerSample?: number;
  /**
   * The worst point of backward is a batched matmul's (the gradients of operands it expanded to the batch): cuDNN's
   * convolution workspace is not allocated beside it, the convolutions' backward coming later (traced nets).
   */
  backwardPeakWithoutConvolution?: boolean;
  /**
   * Under autocast, the bytes over 2 an element the gradients at that worst point take where they are fp32 (an
   * element-wise product with fp32 softmax weights makes fp32 gradients), per sample (traced nets).
   */
  backwardPeakAutocastSurplusBytesPerSample?: number;
  /**
   * Of fixedBytesPerSample, what layers after that worst point keep (max-pool indices, dropout masks): their
   * backward has freed it when backward reaches the worst point (traced nets).
   */
  fixedBytesAfterBackwardPeak?: number;
  /**
   * Backward layer by layer (traced nets): per layer, the elements alive per sample when its backward runs and the
   * trainable parameters of the layers before it (their gradients are not made yet; the later layers' are).
   */
  backwardPoints?: Array<{ elements: number; parametersBefore: number; compileRecomputed?: number }>;
  /**
   * Of the saved elements per sample, those torch.compile recomputes in backward instead of keeping (traced nets):
   * dropout outputs whose input forward keeps anyway. With their bytes under autocast.
   */
  compileRecomputed?: { elementsPerSample: number; autocastBytesPerSample: number };
  /**
   * Elements per sample a backward run with create_graph=True keeps beside what forward kept (traced nets): the
   * gradients of the outputs of the layers whose double backward reads them (weights, norms, smooth activations).
   */
  createGraphElementsPerSample?: number;
  /** The largest output-plus-input gradient of one layer, per sample (traced nets). */
  gradientPairElementsPerSample?: number;
  /** Bytes kept per sample when forward runs under autocast (fp32 where autocast keeps fp32), where traced. */
  autocastSavedBytesPerSample?: number;
  /**
   * Bytes alive per sample at the worst point of a no-grad forward under autocast, where some of them are fp32 (a
   * Swin block's residual stream and softmax); absent: the live elements at 2 bytes.
   */
  autocastInferenceLiveBytesPerSample?: number;
  /** Checkpointing runs the blocks in round(sqrt(n)) segments (checkpoint_sequential) rather than one at a time. */
  checkpointSegments?: boolean;
  /** Parameters of layers whose weights autocast casts to half (conv, linear, attention). */
  castParameters: number;
  /**
   * Output elements per sample of the library modules the builder names, by their path in the model (`layer1`):
   * what a forward hook on one of them that keeps its output holds per batch.
   */
  namedOutputElementsPerSample?: Record<string, number>;
  /** Parameters of sparse embeddings (`sparse=True`): their gradients hold the looked-up rows, not the table. */
  sparseGradientParameters?: number;
  /** Their sparse gradients per sample, as the traced forward looked them up: rows (an int64 index each) and values. */
  sparseGradientPerSample?: { rows: number; values: number };
  /** Named top-level submodules in forward order, the classifier head last (library vision models). */
  parts?: LayerPart[];
  /** The running totals and the tensor where the last part ends (before the loss's read of the output): see parts. */
  partsEnd?: LayerPart;
  /**
   * The parts before the first trainable one are frozen and record nothing: while they run, this many elements an
   * image are alive as in a no-grad forward (what forward keeps after them is savedElementsPerSample).
   */
  frozenPrefix?: { liveElementsPerSample: number; parameters: number };
  /** Input kind and the size the per-sample figures were computed for. */
  /**
   * `width`: an image that is not square (a detector's resized, padded batch); absent: size x size. `frames`: a
   * video clip (C, T, H, W) of that many frames.
   */
  input: { kind: 'image'; channels: number; size: number; width?: number; frames?: number } | { kind: 'tokens'; seqLen: number } | { kind: 'vector'; features: number };
  /** True when the shapes scale with image area or sequence length (conv nets, token models); false for MLPs. */
  scalesWithInput: boolean;
  /**
   * Not every tensor of forward grows with the batch (traced nets): an MoE layer's (experts, capacity, features)
   * buffers keep the size of a capacity the script computes once. The per-sample figures then hold at `batch` only,
   * and the net is rebuilt (traced again) for the batch it is estimated at.
   */
  batchDependent?: { batch: number };
  /**
   * Every tensor the step's forward was given is given whole (a full graph's node table and edge list, made once):
   * the figures are the whole step's, whatever batch size is assumed, so no largest batch can be read from them.
   */
  wholeStep?: boolean;
}

export type ModelSpec = TransformerSpec | LayerNetSpec;

/** Everything the estimate depends on; detection fills it, options override it, the panel edits it. */
export interface TrainingConfig {
  modelName: string;
  model: ModelSpec;
  /**
   * A second library model trained in the same step (the other tower of a two-tower model: a timm image encoder
   * beside a hub text encoder), fed the same batch: its weights, gradients, optimizer states and activations are
   * held beside the model's.
   */
  /** checkpointing: where the tower's own switch differs from the model's (a second hub model checkpointed alone). */
  jointTower?: { name: string; model: ModelSpec; imageSize: number; rebuildAt?: (inputSize: number) => LayerNetSpec; checkpointing?: boolean };
  /**
   * How the layer net's per-sample figures scale: rebuild at another input size, and at another batch where they
   * depend on it (LayerNetSpec.batchDependent).
   */
  rebuildAt?: (inputSize: number, batch?: number) => LayerNetSpec;
  batchSize: number;
  seqLen: number;
  /** Encoder-decoder text models: the labels' length (the decoder's sequence), when it differs from seqLen. */
  targetLen?: number;
  /** The model returns its KV cache (config.use_cache, True by default for decoders): a no-grad forward keeps it. */
  kvCache?: boolean;
  imageSize: number;
  precision: Precision;
  /** dtype of the weights as loaded (before any autocast): from torch_dtype, .half(), .to(bf16), or the checkpoint. */
  weightDtype: WeightDtype;
  optimizer: OptimizerKind;
  /**
   * Parameter-sized states the optimizer keeps where its arguments decide them: RMSprop's square_avg, plus a
   * momentum_buffer with momentum > 0 and a grad_avg when centered; Adam's two moments plus max_exp_avg_sq with
   * amsgrad; LBFGS's history_size pairs of flat vectors beside its own flat copies. Absent: the kind's default
   * (RMSprop 1, Adam 2, LBFGS 2 x 100 + 3).
   */
  optimizerStates?: number;
  optimizerImpl: OptimizerImpl;
  checkpointing: boolean;
  /** The script checkpoints through checkpoint_sequential (segments of blocks) rather than block by block. */
  checkpointSegments?: boolean;
  /** How many segments the script gives checkpoint_sequential (round(sqrt(n)) of the blocks when it does not say). */
  checkpointSegmentCount?: number;
  /** The script runs the model through torch.compile (inductor). */
  compiled?: boolean;
  accumulation: number;
  /** Gradients alive through the next forward: accumulation > 1 or a loop that never calls zero_grad. */
  gradsKeptAcrossSteps: boolean;
  /** Every training loop frees its gradients after its last backward (zero_grad after step): none outlive the loop. */
  gradientsFreedAfterSteps?: boolean;
  /**
   * A SparseAdam beside the optimizer holds the sparse embeddings' parameters (`sparseGradientParameters`): two dense
   * states each; `optimizer` covers the rest.
   */
  sparseAdamBeside?: boolean;
  /**
   * Whether the model's output stays alive through backward beside what the loss keeps of it (a language model's
   * logits): true where the scope that calls backward binds it to a name (`logits = model(x)`), false where only the
   * loss is taken (`model(...).loss`, the HF Trainer). Unknown: kept for Hub models (their output object holds the
   * logits in the usual `outputs = model(**batch)`), not for the script's own modules.
   */
  outputKept?: boolean;
  /**
   * The forward runs under `torch.autograd.graph.save_on_cpu()`: every tensor autograd saves for backward is copied to
   * host memory as it is saved and brought back when its node's backward runs, so the GPU keeps what is alive anyway
   * (the outputs the step holds) and, in backward, one node's saved tensors at a time.
   */
  savedOnHost?: boolean;
  /**
   * Inference with grad: the forward runs in a function that returns only detached values, so each call's graph is
   * freed when it returns, before the next one is built (otherwise the previous graph lives until rebound).
   */
  graphFreedOnReturn?: boolean;
  /**
   * No-grad: the model is given no labels, so a loss over its outputs runs in the script after the name holding
   * the previous batch's outputs is rebound (with labels the model computes it while they are still alive).
   */
  lossAfterRebind?: boolean;
  /** No-grad without labels, and no loss or softmax reads the outputs (an argmax): no fp32 copy of them is made. */
  outputsUnscored?: boolean;
  /** Every forward's output object is read at once (`model(x).logits`): the KV cache it holds is freed then. */
  outputObjectDropped?: boolean;
  /**
   * Forward calls of the model whose graphs one backward runs through (a triplet's three batches): the activations
   * of the step are this many batches'. Absent: one.
   */
  forwardsPerBackward?: number;
  /**
   * Forwards whose graphs one backward runs through, run in loops before it (a meta-learning step's inner steps and
   * query forwards, a loss summed over a loop): in units of the batch, the rows of all of them, of those whose
   * gradient over fast weights was taken with create_graph=True (their backward's saved tensors are kept too), and of
   * the largest one (what backward's transients follow), and the copies of the weights (fast weights) the graphs hold.
   * Absent: one forward (or forwardsPerBackward).
   */
  keptGraphs?: { rows: number; createGraphRows: number; largestRows: number; weightCopies: number };
  /**
   * Sequences each sample of the batch is run as (a multiple-choice model's choices, flattened into its batch): the
   * transformer runs batchSize x this many. Absent: one.
   */
  sequencesPerSample?: number;
  /**
   * Training through derivatives taken with create_graph=True (`torch.autograd.grad(u, x, create_graph=True)`): the
   * highest order. Each order builds a graph of its own beside the forward's, kept until backward. Absent: none.
   */
  inputDerivativeOrder?: number;
  /**
   * Per-sample gradients (torch.func `vmap(grad(f))`, DP-SGD): every trainable parameter's gradient for each sample;
   * `keptAcrossSteps` where the previous step's are alive while the next are computed. Absent: a plain backward.
   */
  perSampleGradients?: { keptAcrossSteps: boolean };
  /** The kind of activation those derivatives go through (absent: smooth). */
  inputDerivativeActivation?: DerivativeActivation;
  /**
   * The share of the forward's saved tensors that the derivatives differentiate, where they go through one of
   * several models trained together (a GAN's critic, for a gradient penalty). Absent: all of them.
   */
  inputDerivativeShare?: number;
  /**
   * The forwards of that model whose graphs the same backward runs through, the differentiated one among them (a
   * critic run on the real, the fake and the mixed batches), where each model's forward is otherwise counted once.
   */
  inputDerivativeModelForwards?: number;
  /**
   * Inference through `generate()`: the tokens it adds to each prompt of seqLen (decoder-only models: the KV cache
   * grows to the prompt plus these) or the decoder's tokens (encoder-decoder models: the self-attention cache grows
   * to these beside a cross-attention cache over the seqLen source tokens); only the last position's logits are made.
   */
  generateNewTokens?: number;
  /**
   * A decoding loop written by hand (decoder-only, no grad): the prompt's forward returns the logits of every position
   * with the cache, and the loop feeds this many tokens one at a time with the cache; the prompt's output stays
   * bound until the first step's output replaces it.
   */
  decodingLoopTokens?: number;
  /**
   * generate() with num_beams > 1: every sequence is searched as this many rows (the inputs are expanded before the
   * first step), so the KV caches, the encoder's output and each step's logits are this many times the batch's.
   */
  generateBeams?: number;
  /**
   * generate() without beam search asked for num_return_sequences > 1: the prompts are expanded to this many rows
   * each before the first step (sampling several completions), as beams are.
   */
  generateReturnSequences?: number;
  /**
   * A loss computed in chunks under checkpoint() outside the model (see DetectedConfig.recomputedLossChunk): the
   * elements of one chunk's logits, which backward recomputes and differentiates one chunk at a time.
   */
  recomputedLossElements?: number;
  mode: RunMode;
  attention: AttentionImpl;
  /** LoRA: rank and the module names it adapts; undefined when none. */
  /** dropout: LoraConfig's lora_dropout (absent: 0, PEFT's default). */
  /**
   * parametrized: registered as a weight parametrization (W + B @ A made at every access): the adapted linears keep
   * their inputs and that weight, as trained linears do, and no adapter copies.
   */
  lora?: { rank: number; targetModules: string[]; dropout?: number; parametrized?: boolean };
  /** Trainable parameters when the script freezes some (0..parameters); undefined means all. */
  frozenFraction?: number;
  /**
   * Parameters the optimizers hold, where fewer than the trainable ones (`AdamW(model.fc.parameters())` on a model
   * nothing froze): their states alone are kept, while every parameter that requires grad still gets a gradient.
   */
  optimizerParameters?: number;
  /**
   * Elements of tensors the optimizers hold in place of the model's parameters (an image optimised through a frozen
   * network): their gradients and optimizer states are counted as parameters' are. Absent: none.
   */
  optimizedTensorElements?: number;
  /**
   * Mixed precision by hand: the optimizer holds fp32 copies of the half-precision trainable parameters (master
   * weights), so its states are fp32 and the step reads fp32 gradients copied from the half ones.
   */
  masterCopies?: boolean;
  /**
   * Transformers: the embeddings and this many blocks from the first are frozen, so those blocks see inputs without
   * history and keep nothing for backward; the blocks above keep everything. Absent: not known block by block.
   */
  frozenLowerLayers?: number;
  /**
   * Copies of the model's weights the script keeps on the GPU beside the model (an EMA model), in units of the
   * model's weights: weights only, with no gradients or optimizer states, and never sharded.
   */
  modelCopies?: number;
  /**
   * A copy of the model (a momentum key encoder, an EMA teacher) runs a forward under no_grad in the step, after the
   * model's own: what that forward holds at once comes on top of the activations the model's forward keeps.
   */
  copyForwardUnderNoGrad?: boolean;
  /**
   * Where batch loops keep a model output per batch without a graph (predictions appended under no_grad for a
   * metric after the loop): memory that grows with the batches, beside the step's peak. Absent: none.
   */
  keptOutputs?: KeptOutputSite[];
  /** Bytes of tensors the script keeps on the GPU outside the model (a rollout buffer): alive in every phase. */
  residentDataBytes?: number;
  /**
   * A frozen network the loss runs with grad on the model's output (a perceptual loss's VGG features): its weights'
   * bytes, what its forward saves for backward per sample, and what it saves whatever the batch (half copies of
   * its weights under autocast).
   */
  lossNetwork?: { weightBytes: number; savedBytesPerSample: number; savedBytes: number };
  gpus: number;
  strategy: Strategy;
  /**
   * The script wraps the model in a data-parallel wrapper (found in the source, or set with --strategy); with
   * gpus > 1 one is implied. Absent means no wrapper: a plain single-GPU script has no DDP bucket.
   */
  dataParallel?: boolean;
  /** FSDP with SHARD_GRAD_OP / reshard_after_forward=False, found in the source; the CLI's `fsdp` is FULL_SHARD. */
  shardGradOp?: boolean;
  /** ZeRO/FSDP offload of optimizer states to the CPU. */
  offloadOptimizer: boolean;
  gpuName?: string;
  /** Where each value came from: 0-based lines of the script (absent when assumed or overridden). */
  lines: Partial<Record<ConfigField, number>>;
  /** How the model was found (catalog id, config.json, torchvision, custom class...). */
  modelSource: string;
  /** The model construction could not be read: no figure that depends on it is given. */
  unresolved?: { line: number | null; reason: string };
  /** How the detected values were found (absent: a literal where `lines` has a line, else assumed). */
  how?: Partial<Record<'model' | 'batchSize' | 'seqLen' | 'targetLen' | 'imageSize', How | 'option'>>;
}

export type ConfigField = 'model' | 'batchSize' | 'seqLen' | 'targetLen' | 'imageSize' | 'precision' | 'optimizer' | 'checkpointing' |
  'accumulation' | 'lora' | 'mode' | 'attention' | 'strategy' | 'weightDtype';

export interface Breakdown {
  weights: number;
  gradients: number;
  optimizerStates: number;
  activations: number;
  other: number;
}

export type PeakPhase = 'forward' | 'backward' | 'optimizer-step';

export interface EstimateNumbers {
  parameters: number;
  trainableParameters: number;
  breakdown: Breakdown;
  peakAllocated: number;
  peakReserved: number;
  cudaContext: number;
  peakPhase: PeakPhase;
  phases: Record<PeakPhase, number>;
  /**
   * Bytes of all gradients per GPU once backward is done (0 outside training). The breakdown holds the gradients
   * that exist at the peak: none yet in forward after zero_grad(set_to_none), only the head's at the start of backward.
   */
  gradientsAfterBackward: number;
}

/**
 * The largest batch size the fit search tries (`shared/spec/cli.md`: capped at 65,536, printed `≥ 65536`): past it the
 * figure says nothing a user can act on, and a tiny or half-read model would otherwise show millions.
 */
export const MAX_BATCH_SIZE = 65_536;

/** A largest batch size as the user reads it: the cap is a floor, not the answer (`≥ 65536`). */
export function maxBatchSizeText(size: number): string {
  return size >= MAX_BATCH_SIZE ? `≥ ${MAX_BATCH_SIZE}` : String(size);
}

export interface GpuFit {
  gpu: string;
  capacity: number;
  fits: boolean;
  /**
   * Largest batch size that fits, at most `MAX_BATCH_SIZE`; null when not even one sample fits, or where the batch
   * does not scale the step (see noMaxBatchSize).
   */
  maxBatchSize: number | null;
  /** Why no largest batch is given where the batch size does not scale the step (a full-graph step). */
  noMaxBatchSize?: string;
}

export interface Located<T> {
  value: T;
  /** 0-based line where the value came from; undefined when assumed or given as an option. */
  line?: number;
  /** How it was found (`oomguard estimate --json`'s `how`): a literal, an argparse default, a config entry, … */
  how?: How;
}
