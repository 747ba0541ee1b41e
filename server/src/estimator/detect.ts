// Detects the training configuration of a PyTorch script from its tree-sitter tree: the model, batch size,
// sequence length, image size, precision, optimizer, checkpointing, accumulation, LoRA, frozen parameters,
// training vs inference and data parallelism, each with the 0-based line it came from.
import { splitLines } from '../engine/lines';
import { enclosingLoops, enclosingScope } from '../engine/syntax';
import { t } from '../l10n';
import * as path from 'node:path';
import { host } from '../host';
import type { PyNode as Node, PyTree as Tree } from '../engine/program/node';
import { findCatalogModel, makeSpec } from './catalog/models';
import { countTransformerParameters } from './transformer';
import { dtypeBytes } from './model';
import { findVideoModel, findVisionModel, SEGFORMER_DEFAULTS, type VideoModel, SEGFORMER_SIZES, segformer, type SegformerShape, type VisionModel, type VisionOptions } from './catalog/vision';
import { buildDetector, detectsInEvaluation, findDetectionModel, isSingleShot, type DetectionModel } from './catalog/detection';
import { findFlowModel, type FlowModel } from './catalog/optical-flow';
import { headClasses, isHeadPath, libraryVisionCall, partParameters, partsNamed, replacedHeadClasses, replacedResNetStem, stripTimmTag, timmTagClasses, TORCHVISION_GET_MODEL, TORCHVISION_MODEL, TORCHVISION_NOT_A_MODEL, visionFreezing } from './library-models';
import { withFrozenPrefix, withPartsBefore } from './layers';
import { isOptimizerClass } from '../engine/semantic/parameters';
import { holdsModule, holdsValue, layerParameters, scriptModuleHoldsPartsOf, moduleNet, moduleParameters, TARGET_VARIABLE, trainedTogether, wrappersHolding, type CustomModuleInfo } from './module-tree';
import { isIntegerTensor, isModuleClass, isModuleValue, madeTensorElementBytes, madeTensorShape, NONE, numberOf, partialTensorShape, tensorShape, type CallResultValue, type How, type Value } from '../engine/program/values';
import { deviceNamed, INPUT_EMBEDDINGS, passCount, type ProgramModel } from '../engine/program/interpreter';
import { treeIndex } from '../engine/program/tree-index';
import { underNoGrad } from '../engine/program/grad-mode';
import { Bindings, callArguments, stringValue, toPy, type PyValue } from './python-values';
import { keptOutputSites, type KeptOutputSite } from './kept-outputs';
import { forwardsAtBackward, type ForwardsAtBackward } from './forwards-at-backward';
import { withAudioConfig } from './speech';
import { AST_MODEL_CLASS, astFromConfig, hierarchicalFromConfig, HIERARCHICAL_MODEL_CLASS } from './hf-vision-configs';
import { imageExtent, waveformSamples, type ImageExtent } from './sample-tensors';
import { sampleArguments, sampleFields, type SampleShape } from './dataset-samples';
import { sparseAdjacency, type SparseAdjacency } from './sparse-adjacency';
import { loopLoader } from './growth';
import { imageRuns, largestLaterRun } from './image-reruns';
import { embeddedSequence, type EmbeddedSequenceSources } from './embedded-sequence';
import { optimizedTensors, type OptimizedTensors } from './optimized-tensors';
import type {
  AttentionImpl, LayerNetSpec, Located, ModelSpec, OptimizerImpl, OptimizerKind, RunMode, Strategy,
  TransformerFamily, TransformerSpec, TransformerTask, WeightDtype,
} from './types';
import { LBFGS_DEFAULT_HISTORY } from './types';
import { derivativeActivationOf, type DerivativeActivation } from './derivative-graphs';

export type ModelSource = 'catalog' | 'config-json' | 'from-config' | 'torchvision' | 'timm' | 'custom' | 'params' | 'unresolved';

export interface DetectedModel {
  name: string;
  source: ModelSource;
  line: number;
  spec: ModelSpec;
  rebuildAt?: (inputSize: number, batch?: number) => LayerNetSpec;
  /** dtype the weights load in when the script names none (transformers 5: the checkpoint's torch_dtype). */
  defaultWeightDtype: WeightDtype;
  /** The input size the architecture is built for, where its name says (timm `vit_base_patch16_384`: 384). */
  nativeImageSize?: number;
  /** How the name was found where the script names the model by a value (`getattr(models, args.arch)`: an argparse default). */
  nameHow?: How;
}

export interface DetectedConfig {
  model?: DetectedModel;
  /** A model construction was found but could not be resolved: never replaced by another model. */
  unresolved?: { line: number; reason: string };
  /** torch.nn layer types of a custom model that the estimator does not model. */
  unknownLayers?: string[];
  /**
   * parse_args calls given an argument list the script does not determine (or naming a file that is not found, or an
   * argument the parser rejects): their lines, and the argument not read. The defaults were read there.
   */
  unreadArgumentLists?: ReadonlyArray<{ line: number; argument: string | undefined }>;
  /** The line of a pack_padded_sequence call (see the assumption it gives). */
  packedSequences?: number;
  /** The model's input folds leading axes into its rows, by an expression the estimate cannot size (see CustomModuleInfo). */
  foldedInput?: Located<string> & { rowsPerSample: number[] };
  batchSize?: Located<number>;
  seqLen?: Located<number>;
  /** Length of the labels an encoder-decoder is trained on (`text_target=`, `labels = tokenizer(..., max_length=N)`). */
  targetLen?: Located<number>;
  /** `use_cache=False` or `config.use_cache = False`: the model returns no KV cache. */
  useCacheOff?: boolean;
  /** `torch.backends.cudnn.benchmark = True`: the first step searches convolution algorithms. */
  cudnnBenchmark?: number;
  /**
   * A decoding loop written by hand: the model called in a loop with the cache its previous output returned
   * (`past_key_values=past`); the value: the loop's passes (one token fed each), where the program model counts them.
   */
  decodingLoop?: Located<number | undefined>;
  /** The line of a `torch.autograd.graph.save_on_cpu()` that runs (see TrainingConfig.savedOnHost). */
  savedOnHost?: number;
  imageSize?: Located<number>;
  /** Autocast (or Trainer bf16/fp16) found. */
  autocast?: Located<'bf16' | 'fp16'>;
  /** Weights cast or loaded in a dtype (`.half()`, `.to(torch.bfloat16)`, `torch_dtype=`). */
  weightDtype?: Located<WeightDtype>;
  optimizer?: Located<OptimizerKind>;
  /** The line of a forward given no labels: a loss over its outputs comes after the forward, in the script. */
  forwardsWithoutLabels?: number;
  /**
   * The line of a forward given no labels whose outputs no loss reads (the loop takes an argmax or top-k of them):
   * no fp32 copy or log-softmax over the vocabulary is made.
   */
  outputsUnscored?: number;
  /** The line of a forward whose output object is read at once (`model(x).logits`): its KV cache is dropped. */
  outputObjectDropped?: number;
  /** The line of a forward inside a function that returns only detached values (its graph dies on return). */
  graphFreedOnReturn?: number;
  /** States per parameter the optimizer's arguments decide (RMSprop's momentum and centered, Adam's amsgrad). */
  optimizerStates?: number;
  /** The parameters the optimizers hold, where they hold only parts of a library model (`model.fc.parameters()`). */
  optimizerParameters?: Located<number>;
  /**
   * The optimizers hold tensors the script makes, not a module's parameters (an image optimised through a frozen
   * network): those tensors train, and the model only runs.
   */
  optimizedTensors?: OptimizedTensors;
  /** An optimizer class the script builds whose states are not modelled. */
  unmodelledOptimizer?: Located<string>;
  /**
   * The line of a SparseAdam built beside another optimizer: SparseAdam takes sparse gradients only, so it holds the
   * sparse embeddings and the other optimizer (`optimizer`) the rest.
   */
  sparseAdamBeside?: number;
  /**
   * The line of an optimizer given fp32 copies of the parameters (`[p.detach().clone().float() for p in params]`):
   * mixed precision by hand, the model's half weights and gradients beside fp32 master weights, gradients and states.
   */
  masterCopies?: number;
  optimizerImpl?: OptimizerImpl;
  usesTrainer?: Located<boolean>;
  checkpointing?: Located<boolean>;
  /** checkpoint_sequential: the blocks are recomputed in segments. */
  checkpointSegments?: boolean;
  /** The number of segments checkpoint_sequential is given, where the script says. */
  checkpointSegmentCount?: number;
  /**
   * A loss computed in chunks outside the model, each chunk under checkpoint(): the elements of one chunk's logits
   * (its rows, from the `.split(rows)` the loop takes the chunks from, times the rows of the weight the checkpointed
   * function multiplies by), which backward recomputes one chunk at a time.
   */
  recomputedLossChunk?: Located<number>;
  /** torch.compile(model): inductor's graphs fuse a loss forward computes with its backward. */
  compiled?: boolean;
  accumulation?: Located<number>;
  /** parametrized: the adapters are a weight parametrization (see handWrittenLora), not a module beside the linear. */
  lora?: Located<{ rank: number; targetModules: string[]; dropout: number; parametrized?: boolean }>;
  /**
   * `exact`: the frozen share the program model counted. `lowerLayers`: the embeddings and the first N blocks of a
   * library transformer are frozen, so those blocks see inputs without history and record nothing.
   */
  frozen?: Located<number> & { exact?: number; lowerLayers?: number };
  mode: Located<RunMode>;
  attention?: Located<AttentionImpl>;
  strategy?: Located<Strategy>;
  /** FSDP's SHARD_GRAD_OP: `sharding_strategy=ShardingStrategy.SHARD_GRAD_OP`, FSDP2's `reshard_after_forward=False`. */
  shardGradOp?: Located<true>;
  gpus?: Located<number>;
  zeroGradMissing: boolean;
  /** `model.generate(...)`: the tokens it adds to each prompt (max_new_tokens, or max_length less the prompt). */
  generate?: Located<{ newTokens?: number; maxLength?: number; beams?: number; returnSequences?: number; rows?: Located<number> }>;
  /** The line of a `zero_grad(set_to_none=False)`: it zeroes the gradients in place, so they stay allocated between steps. */
  zeroGradKeepsBuffers?: number;
  /**
   * Whether the model's output outlives forward (see TrainingConfig.outputKept): `kept` where a name in the scope
   * that calls backward holds it, `dropped` where only its loss is taken (`model(...).loss`) or the HF Trainer runs
   * the step (its compute_loss returns the loss alone).
   */
  output?: Located<'kept' | 'dropped'>;
  /** The line of a zero_grad() that runs after the model's forward in the loop (before backward): the previous step's gradients live through forward. */
  zeroGradAfterForward?: number;
  /**
   * Every loop that runs backward calls zero_grad() (set_to_none, the default) after it: no gradients are left
   * allocated once the loop is done (an evaluation after training runs beside the weights and states alone).
   */
  gradientsFreedAfterSteps?: boolean;
  /**
   * The forwards whose graphs one backward runs through (a triplet's anchor, positive and negative batches, a
   * stacked ensemble's members, forwards run in loops before it): see forwards-at-backward.ts. Absent: no model.
   */
  forwards?: ForwardsAtBackward;
  /**
   * An ensemble stacked by torch.func (`stack_module_state(models)`, run through `vmap(functional_call(...))`): its
   * members, each running the step's batch through the model's layers, and whether the original members stay on the
   * GPU beside the stacked copies.
   */
  ensemble?: Located<number> & { originalsOnDevice: boolean };
  /**
   * Per-sample gradients with torch.func (`vmap(grad(loss_one), in_dims=(None, 0, 0))`, DP-SGD): the line, and whether
   * the loop keeps the previous step's result while it computes the next.
   */
  perSampleGradients?: Located<boolean>;
  /** `torch.autograd.grad(..., create_graph=True)`: the highest order of derivative taken with its own graph. */
  inputDerivatives?: Located<number>;
  /** A multiple-choice model's choices per sample (see TransformerSpec.multipleChoice); absent where not found. */
  choices?: Located<number>;
  /** The activations the script calls or builds, by how derivatives through them grow (the largest kind found). */
  derivativeActivation?: DerivativeActivation;
  /**
   * The model a create_graph derivative differentiates, where it is one of several trained together (a GAN's critic,
   * for a gradient penalty), its share of what one forward of each saves per sample, and its forwards whose graphs
   * the same backward runs through (the penalised one among them).
   */
  derivativeModel?: { name: string; share: number; forwards: number };
  /**
   * Copies of the model the script keeps on the GPU beside it (an EMA model: `copy.deepcopy(model)`,
   * `AveragedModel(model)`), in units of the model's weights, with the line of the first.
   */
  residentCopies?: Located<number> & {
    /** The line of a call of one of the copies under no_grad after the model's forward (a momentum key encoder's). */
    forwardUnderNoGrad?: number;
  };
  /** Batch loops that keep the model's output per batch without a graph (see TrainingConfig.keptOutputs). */
  keptOutputs?: KeptOutputSite[];
  /** Bytes of tensors made on the GPU that an object of a plain class holds (a rollout buffer), with the line of the largest. */
  residentData?: Located<number>;
  /** A sparse adjacency built on the GPU (a graph network's), resident through every step. */
  sparseAdjacency?: SparseAdjacency;
  /**
   * The library model the estimate is of, held by a module of the script on the GPU beside layers of its own (a
   * backbone given to a wrapper with a head): those layers are not counted, and said.
   */
  libraryWrapped?: Located<{ wrapper: string; library: string; others: string[] }>;
  /**
   * A library vision model held, beside the hub model the estimate is of, by one module of the script on the GPU (a
   * two-tower model: a timm image encoder and a hub text encoder) and trained with it.
   */
  jointTower?: Located<DetectedModel & { checkpointing?: boolean }>;
  /**
   * Image batches of several sizes the trained model is given in one call (DINO's multi-crop), and how many images of
   * the largest size make the same tokens (a ViT) or pixels: the batch the estimate counts.
   */
  cropList?: Located<{ crops: Array<{ batch: number; height: number; width: number }>; images: number; size: number; tokens: boolean }>;
  /** Bytes of the buffers the script's modules on the GPU register (a static KV cache), with the line of the largest. */
  moduleBuffers?: Located<number>;
  /**
   * A torchvision detector: the images' height and width as the step receives them, the size its transform resizes
   * them to and pads the batch to, and what the estimate takes at a bound (see catalog/detection.ts).
   */
  detector?: Located<{
    name: string; height: number; width: number; resizedHeight: number; resizedWidth: number; paddedHeight: number; paddedWidth: number;
    minSize: number; maxSize: number; frozenNorms: boolean; pretrained: boolean; detections: boolean; head: string;
    /** trainable_backbone_layers (the builders' 3 over pretrained weights); absent: every stage trains. */
    trainableLayers?: number;
    /** Sizes drawn at random per image: the smallest height and width (the resized sides are the batch's largest). */
    leastHeight?: number;
    leastWidth?: number;
    /** SSD's square input; `imagesAssumed`: the script does not size its images, taken at that square. */
    fixedSize?: number;
    imagesAssumed?: boolean;
  }>;
  /** Images of unequal height and width the model is sized for, as a square of the same area (imageSize). */
  rectangularImage?: Located<{ height: number; width: number }>;
  /** The batch the first run of the training function had, where a rebuilt loader runs it again with a larger one (line: the rebuild). */
  batchRerun?: Located<number>;
  /**
   * The training function runs first on these batches, then again (from the line given) on batches of more pixels,
   * which the estimate is of.
   */
  imageRerun?: Located<{ batch: number; imageSize: number }>;
  /** A video classifier's clip length (frames); `assumed` where the script does not say (the catalog's). */
  videoFrames?: Located<number> & { assumed: boolean };
  /**
   * An optical-flow model's refinement iterations (RAFT's `num_flow_updates=` in the step's call); `assumed` where
   * no call says (forward's default).
   */
  flowUpdates?: Located<number> & { assumed: boolean };
  /** The line of a `freeze_feature_encoder()` (Wav2Vec2, HuBERT): the convolutional feature encoder is frozen. */
  featureEncoderFrozen?: number;
  /**
   * A model on the GPU beside the trained one that no optimizer updates (a distillation's frozen teacher); its
   * parameters as so many of the trained model's weight dtype (a bf16 teacher beside an fp32 student: half of them).
   */
  untrainedModel?: Located<{ name: string; parameters: number }>;
  /**
   * A library VGG's `features` (the first `count` of its modules) the script freezes and runs with grad on what the
   * model makes (a perceptual loss): its weights are on the GPU, and what its forward saves is kept for backward.
   */
  lossNetwork?: Located<{ name: string; count?: number }>;
  /** Library models trained one after the other, in the order their phases run; the estimate is of the largest. */
  sequentialPhases?: Located<string[]> & { unsized?: string[] };
}

const HF_MODEL_CLASS = /(^|\.)(Auto\w*|\w+(ForCausalLM|LMHeadModel|ForSequenceClassification|ForMaskedLM|ForConditionalGeneration|ForImageClassification(WithTeacher)?|ForTokenClassification|ForQuestionAnswering|ForMultipleChoice|ForCTC|ForPreTraining|Model|ForSeq2SeqLM))$/;

// Patterns the loop over every call tests: constants, since a regular expression literal is a new object each time it runs.
const WHITESPACE = /\s+/g;
const NOT_A_MODEL_CLASS = /Tokenizer|Processor|Config|FeatureExtractor/;
const CONFIG_FROM_PRETRAINED = /(^|\.)\w*Config\.from_pretrained$/;
const UNKNOWN_VALUE: Value = { kind: 'unknown' };
const TORCHVISION_MODEL_NAME = /^(resnet\d+|vit_[bl]_\d+|efficientnet_b0|mobilenet_v2|convnext_tiny)$/;
const LIGHTNING_TRAINER = /(^|\.)(lightning|pytorch_lightning)(\.pytorch)?\.Trainer$/;
const TENSOR_FACTORY = /^torch\.(randint|randn|rand|zeros|ones|empty|full|randperm)$/;
const TIMM_DATA_CONFIG = /^resolve_(model_)?data_config$/;
const RESIZE_OR_CROP = /^(Resize|RandomResizedCrop|CenterCrop|RandomCrop)$/;
const AUTOCAST = /(^|\.)autocast$/;
const GRAD_SCALER = /GradScaler$/;
const MODELLED_OPTIMIZER = /^(SGD|Adam|AdamW|Adafactor|Adam8bit|AdamW8bit|PagedAdamW8bit|PagedAdam8bit|AdamW8bit|RMSprop|Adagrad|Adadelta|SparseAdam|LBFGS)$/;
const CAPITALISED = /^[A-Z]/;
const TORCH_OPTIMIZER_CLASS = /^torch\.optim\.[A-Z]\w*$/;
const CHECKPOINT = /(^|\.)(checkpoint|checkpoint_sequential)$/;
const NO_GRAD = /(^|\.)(no_grad|inference_mode)$/;
const DDP_CLASS = /DistributedDataParallel$/;
const FSDP_CLASS = /FullyShardedDataParallel$/;

/**
 * The callee texts of the tree detectConfig is reading, by node id from `base` (the tree's smallest id): detection
 * asks every call's callee in several passes, and making the text each time (a slice and a replace) was 5% of an
 * estimate. Set for the duration of one detectConfig; a WeakMap by node cost more than the text it saved.
 */
let calleeTexts: { base: number; texts: Array<string | undefined> } | undefined;

function callee(call: Node): string {
  const offset = calleeTexts ? call.id - calleeTexts.base : -1;
  const known = offset >= 0 ? calleeTexts!.texts[offset] : undefined;
  if (known !== undefined) return known;
  const text = call.childForFieldName('function')?.text.replace(WHITESPACE, '') ?? '';
  if (offset >= 0 && offset < calleeTexts!.texts.length) calleeTexts!.texts[offset] = text;
  return text;
}

function lastName(dotted: string): string {
  return dotted.slice(dotted.lastIndexOf('.') + 1);
}

/** The script's last `….backward()` call (searched from the end: no list of them is made). */
function lastBackwardCall(calls: readonly Node[]): Node | undefined {
  for (let i = calls.length - 1; i >= 0; i--) if (lastName(callee(calls[i]!)) === 'backward') return calls[i];
  return undefined;
}

function taskFromClass(className: string, family: TransformerFamily): TransformerTask {
  if (/CausalLM|LMHead/.test(className)) return 'causal-lm';
  // A multiple-choice head scores each (context, choice) sequence: a one-label classifier over the pooled output.
  if (/SequenceClassification|TokenClassification|QuestionAnswering|MultipleChoice/.test(className)) return 'seq-cls';
  if (/MaskedLM/.test(className)) return 'masked-lm';
  // ELECTRA's pre-training class is its discriminator: a dense layer and one logit a token (see withClassHead).
  if (className === ELECTRA_DISCRIMINATOR) return 'seq-cls';
  // MarianMTModel is Marian's ForConditionalGeneration (a language-model head on the decoder).
  if (/ConditionalGeneration|Seq2SeqLM|SpeechSeq2Seq|MTModel$/.test(className)) return family === 'whisper' ? 'speech-seq2seq' : 'seq2seq';
  if (/ImageClassification/.test(className)) return 'image-cls';
  if (/ForCTC$/.test(className)) return 'ctc';
  // BERT's pre-training head is its masked-LM head (and a 2-way sentence head); ViT-MAE's is its decoder.
  if (/ForPreTraining/.test(className)) return family === 'vit' ? 'base' : 'masked-lm';
  if (family === 'clip') return 'contrastive';
  return 'base';
}

const ELECTRA_DISCRIMINATOR = 'ElectraForPreTraining';

/**
 * A head whose size the class fixes whatever num_labels says: a multiple-choice classifier gives one score a
 * sequence; ELECTRA's discriminator one logit a token, after a dense layer as large as a classifier's pooler.
 */
function withClassHead(spec: TransformerSpec, className: string): TransformerSpec {
  if (/ForMultipleChoice$/.test(className)) return { ...spec, numLabels: 1, multipleChoice: true };
  if (className === ELECTRA_DISCRIMINATOR) return { ...spec, numLabels: 1, pooler: true };
  // ElectraClassificationHead: a dense layer over the first token, then the classifier (counted as a pooler's).
  if (className === 'ElectraForSequenceClassification') return { ...spec, pooler: true };
  // ViTModel and DeiTModel add their pooler (a dense layer and tanh over the class token) by default; the image
  // classifiers build theirs without it. DeiTForImageClassification classifies the class token alone; the
  // ...WithTeacher class has a second classifier on the distillation token.
  if (/^(ViT|DeiT)Model$/.test(className)) return { ...spec, pooler: true };
  if (/^(ViT|DeiT)ForImageClassification$/.test(className)) return { ...spec, pooler: false, ...(className.startsWith('DeiT') ? { singleClassifier: true } : {}) };
  return spec;
}

function dtypeFrom(value: PyValue | undefined): WeightDtype | undefined {
  const name = value && typeof value === 'object' && 'dtype' in value ? value.dtype : typeof value === 'string' ? value : undefined;
  if (!name) return undefined;
  if (name === 'bfloat16') return 'bf16';
  if (name === 'float16' || name === 'half') return 'fp16';
  if (name === 'float32' || name === 'float') return 'fp32';
  return undefined;
}

/** config.json keys -> our fields, per the names each family uses. */
function specFromConfigJson(json: Record<string, unknown>): TransformerSpec | undefined {
  const n = (...keys: string[]): number | undefined => {
    for (const k of keys) if (typeof json[k] === 'number') return json[k] as number;
    return undefined;
  };
  const modelType = String(json.model_type ?? '');
  const families: Record<string, TransformerFamily> = {
    gpt2: 'gpt2', bert: 'bert', roberta: 'bert', distilbert: 'distilbert', 'deberta-v2': 'deberta', llama: 'llama', mistral: 'llama',
    qwen2: 'llama', qwen3: 'llama', phi3: 'llama', opt: 'opt', phi: 'phi', gemma: 'gemma', gemma2: 'gemma', t5: 't5', mt5: 't5', vit: 'vit',
    whisper: 'whisper', bart: 'bart', mbart: 'bart', gpt_neox: 'gpt_neox', wav2vec2: 'wav2vec2', hubert: 'wav2vec2', albert: 'albert',
  };
  const family = families[modelType];
  if (!family) return undefined;
  const hidden = n('hidden_size', 'n_embd', 'd_model', 'dim');
  const layers = n('num_hidden_layers', 'n_layer', 'num_layers', 'encoder_layers', 'n_layers');
  const heads = n('num_attention_heads', 'n_head', 'num_heads', 'encoder_attention_heads', 'n_heads');
  if (!hidden || !layers || !heads) return undefined;
  const spec = makeSpec(family, {
    hidden, layers, heads,
    intermediate: n('intermediate_size', 'n_inner', 'd_ff', 'ffn_dim', 'encoder_ffn_dim', 'hidden_dim') ?? 4 * hidden,
    vocab: n('vocab_size') ?? 0,
    maxPositions: n('max_position_embeddings', 'n_positions', 'max_target_positions') ?? 512,
    kvHeads: n('num_key_value_heads') ?? heads,
    headDim: n('head_dim', 'd_kv') ?? Math.floor(hidden / heads),
  });
  // transformers 5's T5Config keeps tie_word_embeddings True whatever it is given (see the catalog's t5 entries).
  if (typeof json.tie_word_embeddings === 'boolean' && family !== 't5') spec.tiedEmbeddings = json.tie_word_embeddings;
  if (family === 'llama' && modelType.startsWith('qwen')) spec.attnBias = 'qkv';
  if (modelType === 'gemma2') {
    spec.extraNormsPerLayer = 2;
    spec.finalLogitSoftcap = typeof json.final_logit_softcapping === 'number';
  }
  if (family === 'gpt_neox') {
    // GPTNeoXConfig: dropouts default to 0; tie_word_embeddings defaults to false (read above when given).
    spec.hiddenDropout = (n('hidden_dropout') ?? 0) > 0;
    spec.attnDropout = (n('attention_dropout') ?? 0) > 0;
  }
  if (family === 't5') spec.tiedEmbeddings = true; // transformers 5's T5Config ties the head whatever config.json says
  if (modelType === 'mbart') spec.normPlacement = 'pre';
  if (family === 'bart') {
    if (typeof json.dropout === 'number') spec.hiddenDropout = json.dropout > 0;
    if (typeof json.attention_dropout === 'number') spec.attnDropout = json.attention_dropout > 0;
  }
  if (family === 't5' || family === 'whisper' || family === 'bart') spec.decoderLayers = n('num_decoder_layers', 'decoder_layers') ?? layers;
  if (family === 'albert') Object.assign(spec, albertSharing(spec, n));
  const stored = dtypeFrom(String(json.torch_dtype ?? json.dtype ?? 'float32'));
  if (stored) spec.storedDtype = stored;
  return family === 'wav2vec2' ? withAudioConfig(spec, (key) => json[key]) : spec;
}

/**
 * An AlbertConfig's embedding width, sharing and dropouts over a spec whose `layers` is num_hidden_layers: each
 * of those applications runs its group's inner_group_num layers, and num_hidden_groups groups are stored.
 */
function albertSharing(spec: TransformerSpec, get: (...keys: string[]) => number | undefined): Partial<TransformerSpec> {
  const inner = get('inner_group_num') ?? 1;
  const groups = get('num_hidden_groups') ?? 1;
  const hiddenDropout = get('hidden_dropout_prob');
  const attnDropout = get('attention_probs_dropout_prob');
  return {
    embeddingSize: get('embedding_size') ?? spec.embeddingSize,
    layers: spec.layers * inner,
    storedLayers: groups * inner,
    ...(hiddenDropout !== undefined ? { hiddenDropout: hiddenDropout > 0 } : {}),
    ...(attnDropout !== undefined ? { attnDropout: attnDropout > 0 } : {}),
  };
}

/** XxxConfig(...) keyword arguments over the family's catalog defaults. */
function specFromConfigCall(className: string, attrs: Map<string, Value>): TransformerSpec | undefined {
  const base: Record<string, string> = {
    GPT2Config: 'gpt2', BertConfig: 'bert-base-uncased', RobertaConfig: 'roberta-base', DistilBertConfig: 'distilbert-base-uncased',
    LlamaConfig: 'meta-llama/Llama-2-7b-hf', MistralConfig: 'mistralai/Mistral-7B-v0.1', Qwen2Config: 'Qwen/Qwen2-7B',
    OPTConfig: 'facebook/opt-125m', T5Config: 't5-small', MT5Config: 'google/mt5-small', ViTConfig: 'google/vit-base-patch16-224', GemmaConfig: 'google/gemma-7b',
    PhiConfig: 'microsoft/phi-2', GPTNeoXConfig: 'EleutherAI/pythia-410m', WhisperConfig: 'openai/whisper-tiny', BartConfig: 'facebook/bart-base', MBartConfig: 'facebook/mbart-large-cc25',
    MarianConfig: 'Helsinki-NLP/opus-mt-en-de', PegasusConfig: 'Helsinki-NLP/opus-mt-en-de',
    Wav2Vec2Config: 'facebook/wav2vec2-base-960h', HubertConfig: 'facebook/hubert-base-ls960',
    // AlbertConfig's defaults are ALBERT-xxlarge's sizes.
    AlbertConfig: 'albert-xxlarge-v2',
    // CLIPConfig's defaults are ViT-B/32's towers (CLIPTextConfig and CLIPVisionConfig defaults, projection_dim 512).
    CLIPConfig: 'openai/clip-vit-base-patch32', ViTMAEConfig: 'facebook/vit-mae-base',
    // DeiTConfig's defaults are ViTConfig's (ViT-B/16 at 224) with a distillation token beside the class token.
    DeiTConfig: 'google/vit-base-patch16-224',
    // DeBERTa-v3 is DebertaV2Config with relative attention (see debertaV3Shape); ELECTRA is BERT's layers under
    // embeddings of their own width.
    DebertaV2Config: 'microsoft/deberta-v3-base', ElectraConfig: 'bert-base-uncased',
  };
  const id = base[className];
  if (!id) return undefined;
  if (className === 'DebertaV2Config' && !debertaV3Shape(attrs)) return undefined;
  const entry = findCatalogModel(id);
  if (!entry) return undefined;
  // The config class's own defaults, not the base checkpoint's config.json: BartConfig has no attention dropout;
  // MarianConfig() alone is a 12 + 12 layer, 1,024-wide model, not opus-mt's 6 + 6 x 512 (406,295,552 and
  // 414,307,328 parameters measured for MBartConfig() and MarianConfig(), test/gpu/estimator/results/cat6.json).
  const classDefaults: Partial<TransformerSpec> = {
    ...(entry.spec.family === 'bart' ? { attnDropout: false, hiddenDropout: true } : {}),
    ...(className === 'MarianConfig' ? { hidden: 1024, layers: 12, decoderLayers: 12, heads: 16, kvHeads: 16, headDim: 64, intermediate: 4096, maxPositions: 1024 } : {}),
    // MBartConfig() has BART-large's vocabulary (50,265), not mbart-large-cc25's 250,027.
    ...(className === 'MBartConfig' ? { vocab: 50265 } : {}),
    // PegasusConfig: Marian's sinusoidal tables under pre-LN layers (a final norm on each stack), BART-large's sizes.
    // DebertaV2Config's defaults are DeBERTa-v2-xlarge's sizes.
    ...(className === 'DeiTConfig' ? { prefixTokens: 2 } : {}),
    ...(className === 'DebertaV2Config' ? { hidden: 1536, layers: 24, heads: 24, kvHeads: 24, headDim: 64, intermediate: 6144 } : {}),
    // ElectraConfig's defaults are ELECTRA-small's discriminator; ElectraModel has no pooler.
    ...(className === 'ElectraConfig' ? { hidden: 256, layers: 12, heads: 4, kvHeads: 4, headDim: 64, intermediate: 1024, pooler: false, task: 'masked-lm' as const } : {}),
    ...(className === 'PegasusConfig' ? { hidden: 1024, layers: 12, decoderLayers: 12, heads: 16, kvHeads: 16, headDim: 64, intermediate: 4096, maxPositions: 1024,
      vocab: 50265, normPlacement: 'pre' as const } : {}),
  };
  const spec = withConfigAttributes({ ...entry.spec, ...classDefaults, storedDtype: 'fp32' }, attrs);
  if (className === 'ElectraConfig') {
    // The tables are embedding_size wide (128 by default); a projection to the hidden size only where they differ.
    const width = attrs.get('embedding_size');
    const tables = width?.kind === 'number' ? width.value : 128;
    if (tables !== spec.hidden) spec.embeddingSize = tables;
  }
  if (spec.audio) return withAudioConfig(spec, (key) => toPy(attrs.get(key)));
  if (entry.spec.decoder) {
    // ViT-MAE: the decoder's sizes are the config's decoder_* keys; its patch grid is the encoder's.
    const decoderAttrs = new Map([...attrs].filter(([key]) => key.startsWith('decoder_')).map(([key, value]): [string, Value] => [key.slice('decoder_'.length), value]));
    spec.decoder = { ...withConfigAttributes({ ...entry.spec.decoder }, decoderAttrs), imageSize: spec.imageSize, patchSize: spec.patchSize };
    const ratio = attrs.get('mask_ratio');
    if (ratio?.kind === 'number') spec.maskRatio = ratio.value;
  }
  if (!entry.spec.vision) return spec;
  // A two-tower config (CLIPConfig): each tower is its own sub-config (a dict or a CLIPTextConfig / CLIPVisionConfig).
  const text = withConfigAttributes({ ...entry.spec, storedDtype: 'fp32' }, subConfigAttributes(attrs.get('text_config')));
  const vision = withConfigAttributes({ ...entry.spec.vision }, subConfigAttributes(attrs.get('vision_config')));
  const projection = attrs.get('projection_dim');
  return { ...text, vision, projectionDim: projection?.kind === 'number' ? projection.value : entry.spec.projectionDim };
}

/**
 * Whether a DebertaV2Config is DeBERTa-v3's shape, the one the catalog models: relative attention over 256 position
 * buckets shared with the content keys, a LayerNorm on the relative embeddings, no absolute positions. The class's
 * own defaults (no relative attention, absolute positions) are DeBERTa-v2's other layout, not modelled.
 */
function debertaV3Shape(attrs: Map<string, Value>): boolean {
  const plain = (key: string): PyValue | undefined => toPy(attrs.get(key));
  const norm = plain('norm_rel_ebd');
  return plain('relative_attention') === true && plain('position_biased_input') === false && plain('position_buckets') === 256 &&
    plain('share_att_key') === true && typeof norm === 'string' && norm.split('|').map((part) => part.trim()).includes('layer_norm');
}

const SEGFORMER_CLASS = /^Segformer(ForSemanticSegmentation|Model)$/;

/** A SegformerConfig(...)'s sizes over the class's defaults; undefined where a size is not a value the script determines. */
function segformerFromConfig(attrs: Map<string, Value>): { shape: SegformerShape; classes: number } | undefined {
  const shape: SegformerShape = { ...SEGFORMER_DEFAULTS };
  const lists: Array<[string, 'depths' | 'hiddenSizes' | 'heads' | 'srRatios' | 'patchSizes' | 'strides' | 'mlpRatios']> = [
    ['depths', 'depths'], ['hidden_sizes', 'hiddenSizes'], ['num_attention_heads', 'heads'], ['sr_ratios', 'srRatios'],
    ['patch_sizes', 'patchSizes'], ['strides', 'strides'], ['mlp_ratios', 'mlpRatios']];
  for (const [key, field] of lists) {
    const value = attrs.get(key);
    if (value === undefined) continue;
    const items = value.kind === 'list' ? value.items.map((item) => (item.kind === 'number' ? item.value : undefined)) : [];
    if (items.length !== shape.depths.length && key !== 'depths') return undefined;
    if (items.length === 0 || items.some((item) => item === undefined)) return undefined;
    shape[field] = items as number[];
  }
  if (new Set([shape.depths, shape.hiddenSizes, shape.heads, shape.srRatios, shape.patchSizes, shape.strides, shape.mlpRatios].map((list) => list.length)).size !== 1) return undefined;
  const number = (key: string, fallback: number): number | undefined => {
    const value = attrs.get(key);
    return value === undefined ? fallback : value.kind === 'number' ? value.value : undefined;
  };
  const decoderHidden = number('decoder_hidden_size', shape.decoderHidden);
  const channels = number('num_channels', shape.channels);
  const classes = number('num_labels', 2);
  if (decoderHidden === undefined || channels === undefined || classes === undefined) return undefined;
  return { shape: { ...shape, decoderHidden, channels }, classes };
}

/**
 * A published SegFormer checkpoint by name (`nvidia/mit-b2`, `nvidia/segformer-b0-finetuned-ade-512-512`): its
 * MiT size, and its classes (ADE20K's 150, Cityscapes' 19; the MiT encoders' ImageNet 1,000).
 */
function segformerFromName(id: string): { shape: SegformerShape; classes: number } | undefined {
  const size = /(?:^|\/)(?:mit|segformer)-(b[0-5])\b/i.exec(id)?.[1]?.toLowerCase();
  if (!size) return undefined;
  const classes = /ade/i.test(id) ? 150 : /cityscapes/i.test(id) ? 19 : 1000;
  return { shape: { ...SEGFORMER_DEFAULTS, ...SEGFORMER_SIZES[size] }, classes };
}

/** Model classes that join an encoder and a decoder given apart (transformers' VisionEncoderDecoderModel). */
const ENCODER_DECODER_CLASS = /^VisionEncoderDecoderModel$/;

/** The encoder's and decoder's specs of `VisionEncoderDecoderConfig.from_encoder_decoder_configs(enc, dec)` or `VisionEncoderDecoderConfig(encoder=..., decoder=...)`. */
function encoderDecoderConfigs(config: Value | undefined): Array<TransformerSpec | undefined> | undefined {
  const sub = (value: Value | undefined): TransformerSpec | undefined =>
    value?.kind === 'object' && value.role === 'hf-config' && !undeterminedSize(value.attrs) ? specFromConfigCall(value.typeName, value.attrs) : undefined;
  if (config?.kind === 'call' && /(^|\.)VisionEncoderDecoderConfig\.from_encoder_decoder_configs$/.test(config.path)) {
    return [sub(config.kwargs.get('encoder_config') ?? config.args[0]), sub(config.kwargs.get('decoder_config') ?? config.args[1])];
  }
  if (config?.kind === 'object' && config.role === 'hf-config' && config.typeName === 'VisionEncoderDecoderConfig') {
    return [sub(config.attrs.get('encoder')), sub(config.attrs.get('decoder'))];
  }
  return undefined;
}

/**
 * An image-to-text model: a ViT encoder (a base model with its pooler, as AutoModel builds it) and a GPT-2 or
 * BERT-like decoder given cross-attention (GPT2LMHeadModel, or BertLMHeadModel whose head is the masked-LM head).
 */
function imageToTextSpec(encoder: TransformerSpec | undefined, decoder: TransformerSpec | undefined): TransformerSpec | undefined {
  if (encoder?.family !== 'vit' || !decoder || !['gpt2', 'bert'].includes(decoder.family) || encoder.decoder || decoder.vision) return undefined;
  return {
    ...decoder, task: decoder.family === 'bert' ? 'masked-lm' : 'causal-lm', typeVocab: decoder.family === 'bert' ? decoder.typeVocab : 0,
    crossEncoder: { ...encoder, task: 'base', pooler: true, maskRatio: undefined },
  };
}

/** The keyword arguments of a sub-config: a dict, or a config object built beforehand. */
function subConfigAttributes(value: Value | undefined): Map<string, Value> {
  if (value?.kind === 'dict') return value.entries;
  if (value?.kind === 'object' && value.role === 'hf-config') return value.attrs;
  return new Map();
}

/** The keys that set a config's sizes (read by withConfigAttributes). */
const CONFIG_SIZE_KEYS = ['hidden_size', 'n_embd', 'd_model', 'dim', 'num_hidden_layers', 'n_layer', 'num_layers', 'encoder_layers',
  'num_attention_heads', 'n_head', 'num_heads', 'encoder_attention_heads', 'num_key_value_heads', 'head_dim', 'd_kv', 'intermediate_size',
  'n_inner', 'd_ff', 'ffn_dim', 'encoder_ffn_dim', 'vocab_size', 'num_decoder_layers', 'decoder_layers'];

/** The first size a config is given whose value the script does not determine (`hidden_size=args.hidden` unread). */
/**
 * The most a layer walk's map may grow past the input image's area (8 times its side: a super-resolution net's x8)
 * before the walk is taken for branches read as one chain (see LayerNetSpec.mapGrowth).
 */
const MOST_WALKED_MAP_GROWTH = 64;

function undeterminedSize(attrs: Map<string, Value>): string | undefined {
  return CONFIG_SIZE_KEYS.find((key) => {
    const value = attrs.get(key);
    return value !== undefined && value.kind !== 'number' && value.kind !== 'none';
  });
}

/** A config's values (keyword arguments, or attributes the script set) over a spec. */
function withConfigAttributes(spec: TransformerSpec, attrs: Map<string, Value>): TransformerSpec {
  const get = (...keys: string[]): number | undefined => {
    for (const k of keys) {
      const v = attrs.get(k);
      if (v?.kind === 'number') return v.value;
    }
    return undefined;
  };
  spec.hidden = get('hidden_size', 'n_embd', 'd_model', 'dim') ?? spec.hidden;
  spec.layers = get('num_hidden_layers', 'n_layer', 'num_layers', 'encoder_layers') ?? spec.layers;
  spec.heads = get('num_attention_heads', 'n_head', 'num_heads', 'encoder_attention_heads') ?? spec.heads;
  const headsGiven = ['num_attention_heads', 'n_head', 'num_heads', 'encoder_attention_heads'].some((k) => attrs.has(k));
  // Heads given without key/value heads: every head has its own keys and values (no grouped-query attention).
  spec.kvHeads = get('num_key_value_heads') ?? (headsGiven ? spec.heads : spec.kvHeads);
  const projection = attrs.get('feed_forward_proj');
  if (projection?.kind === 'string') spec.mlp = projection.value.startsWith('gated') ? 'geglu' : 'relu';
  spec.headDim = get('head_dim', 'd_kv') ?? Math.floor(spec.hidden / spec.heads);
  spec.intermediate = get('intermediate_size', 'n_inner', 'd_ff', 'ffn_dim', 'encoder_ffn_dim') ?? (spec.family === 'gpt2' ? 4 * spec.hidden : spec.intermediate);
  if (spec.family === 'bart') {
    const dropout = get('dropout');
    const attention = get('attention_dropout');
    if (dropout !== undefined) spec.hiddenDropout = dropout > 0;
    if (attention !== undefined) spec.attnDropout = attention > 0;
  }
  spec.vocab = get('vocab_size') ?? spec.vocab;
  // A vision transformer's patch grid (ViTConfig, CLIPVisionConfig, ViTMAEConfig).
  if (spec.patchSize !== undefined) {
    spec.imageSize = get('image_size') ?? spec.imageSize;
    spec.patchSize = get('patch_size') ?? spec.patchSize;
  }
  spec.maxPositions = get('max_position_embeddings', 'n_positions') ?? spec.maxPositions;
  if (spec.decoderLayers > 0) spec.decoderLayers = get('num_decoder_layers', 'decoder_layers') ?? spec.layers;
  if (spec.family === 'albert') Object.assign(spec, albertSharing(spec, get));
  const tie = attrs.get('tie_word_embeddings');
  // transformers 5's T5Config keeps tie_word_embeddings True whatever it is given (measured: T5Config(...,
  // tie_word_embeddings=False) builds a T5ForConditionalGeneration whose lm_head is the shared embedding).
  if (tie?.kind === 'bool' && spec.family !== 't5') spec.tiedEmbeddings = tie.value;
  const labels = get('num_labels');
  if (labels) spec.numLabels = labels;
  return spec;
}

const BATCH_NAMES = ['batch_size', 'BATCH_SIZE', 'train_batch_size', 'TRAIN_BATCH_SIZE', 'per_device_train_batch_size', 'bs', 'BS', 'bsz', 'BSZ',
  'micro_batch_size', 'MICRO_BATCH_SIZE', 'batch', 'BATCH'];
// Names of the data's sequence length first (truncated backpropagation's window, `bptt`, is what get_batch slices
// per step); capacity names (`max_len`, `max_position_embeddings`) last: a module that can take 4,096 positions is
// trained on what the data gives it.
const SEQ_NAMES = ['seq_len', 'SEQ_LEN', 'seq_length', 'SEQ_LENGTH', 'sequence_length', 'block_size', 'BLOCK_SIZE', 'context_length',
  'CONTEXT_LENGTH', 'lookback', 'LOOKBACK', 'window_size', 'WINDOW_SIZE', 'bptt', 'BPTT', 'bptt_len', 'BPTT_LEN', 'max_seq_length', 'MAX_SEQ_LENGTH', 'max_seq_len', 'MAX_SEQ_LEN',
  // An encoder-decoder's inputs (the targets' names are TARGET_NAMES).
  'max_source_length', 'MAX_SOURCE_LENGTH', 'max_source_len', 'MAX_SOURCE_LEN', 'max_src_len', 'MAX_SRC_LEN', 'max_src_length', 'MAX_SRC_LENGTH', 'max_input_length', 'MAX_INPUT_LENGTH', 'max_length', 'MAX_LENGTH', 'max_len', 'MAX_LEN'];
/** Names of the choices a multiple-choice sample holds, where the step's data does not show them. */
const CHOICE_NAMES = ['num_choices', 'NUM_CHOICES', 'n_choices', 'N_CHOICES', 'num_options', 'NUM_OPTIONS', 'n_options', 'N_OPTIONS',
  'num_endings', 'NUM_ENDINGS', 'num_candidates', 'NUM_CANDIDATES'];
const TARGET_NAMES = ['max_target_length', 'max_target_len', 'MAX_TARGET_LENGTH', 'MAX_TARGET_LEN', 'target_max_length', 'max_label_length',
  'max_labels_length', 'max_output_length', 'target_length', 'target_len', 'TARGET_LENGTH', 'TARGET_LEN', 'tgt_len', 'TGT_LEN',
  'max_tgt_len', 'MAX_TGT_LEN', 'max_tgt_length', 'MAX_TGT_LENGTH'];
const IMAGE_NAMES = ['image_size', 'img_size', 'IMAGE_SIZE', 'IMG_SIZE', 'input_size', 'resolution', 'crop_size'];
const ACCUM_NAMES = ['gradient_accumulation_steps', 'accumulation_steps', 'grad_accum_steps', 'accum_steps', 'grad_accum', 'ACCUMULATION_STEPS', 'GRAD_ACCUM'];

function firstBinding(bindings: Bindings, names: string[]): Located<number> | undefined {
  for (const name of names) {
    const b = bindings.lookup(name);
    if (b && typeof b.value === 'number' && b.value > 0) return { value: b.value, line: b.line, how: b.how };
  }
  return undefined;
}

function numberArg(node: Node | undefined, bindings: Bindings): Located<number> | undefined {
  if (!node) return undefined;
  const v = bindings.evaluate(node);
  const value = Array.isArray(v) ? v[0] : v;
  return typeof value === 'number' && value > 0 ? { value, line: bindings.lineOf(node), how: bindings.howOf(node) } : undefined;
}

/** Reads config.json next to the script (or in the local folder a from_pretrained call names). */
function readLocalConfig(filePath: string | undefined, relative: string | undefined): Record<string, unknown> | undefined {
  if (!filePath) return undefined;
  const dir = path.dirname(filePath);
  const candidates = [relative ? path.resolve(dir, relative, 'config.json') : undefined, path.join(dir, 'config.json')];
  for (const candidate of candidates) {
    if (!candidate) continue;
    try {
      const text = host().readLocalFile(candidate);
      if (text !== undefined) return JSON.parse(text) as Record<string, unknown>;
    } catch {
      // Missing or unreadable: try the next place.
    }
  }
  return undefined;
}

export function detectConfig(tree: Tree, text: string, filePath?: string): DetectedConfig {
  const index = treeIndex(tree.rootNode);
  const outer = calleeTexts;
  // Ids spread far apart (a copy made of many versions' statements, tree-sitter's own nodes) are not cached.
  const range = index.maxId - index.minId + 1;
  calleeTexts = Number.isSafeInteger(range) && range <= 4 * index.nodeCount ? { base: index.minId, texts: new Array<string | undefined>(range) } : undefined;
  try {
    return detectConfigOf(tree, text, filePath);
  } finally {
    calleeTexts = outer;
  }
}

function detectConfigOf(tree: Tree, text: string, filePath?: string): DetectedConfig {
  const bindings = Bindings.fromTree(tree, filePath);
  const { calls, assignments } = treeIndex(tree.rootNode);
  const detected: DetectedConfig = { mode: { value: 'infer-grad' }, zeroGradMissing: false };
  if (bindings.program.unreadArgumentLists.length > 0) detected.unreadArgumentLists = bindings.program.unreadArgumentLists;
  let configSpec: { spec: TransformerSpec; line: number; name: string; storedDtype?: WeightDtype } | undefined;
  let hasBackward: number | undefined;
  let backwardCall: Node | undefined;
  /** The rows of the first forward the step's backward runs through, where its input was made with a shape. */
  let stepRows: Located<number> | undefined;
  let hasNoGrad: number | undefined;
  let hasZeroGrad = false;
  let trainerTrain: number | undefined;
  let hasGradScaler: number | undefined;
  /** Modules the script builds itself and assigns to variables, in the order they are built. */
  const customModels: Array<CustomModuleInfo & { variable?: string; value: Value }> = [];
  /** The text of every optimizer's arguments: which models' parameters it updates. */
  const optimizerArguments: string[] = [];
  /** Every optimizer the script builds, as the program model made it: the modules whose parameters it holds. */
  const optimizersMade: Value[] = [];
  /** What each optimizer made is (its kind, states, implementation): the one a phase's model is trained by. */
  const optimizerKinds = new Map<Value, { optimizer: Located<OptimizerKind>; states?: number; impl?: OptimizerImpl }>();
  /** The library call (timm, torchvision) the model was resolved from, and the modules the script freezes. */
  let libraryModelMade: Value | undefined;
  /** The first library vision model built inside a module of the script: the model where that module is not one. */
  let skippedBackbone: Value | undefined;
  /** The models whose own gradient_checkpointing_enable() the script calls (`discriminator.gradient_checkpointing_enable()`). */
  const checkpointedModels: Value[] = [];
  /** A second Hugging Face model the optimizers train beside the first (see jointTower). */
  let pairedHubModel: DetectedConfig['jointTower'];
  /** How many micro-batches an `if (i + 1) % n == 0:` around an optimizer's step() lets pass between steps. */
  let accumulationGuard: Located<number> | undefined;
  // LBFGS's history_size and max_iter, and the optimizer steps the script calls (see lbfgsPairsKept).
  let lbfgs: { history: number; maxIter: number } | undefined;
  const stepCalls: Node[] = [];
  const frozenModules: Value[] = [];
  /** Where the script freezes a deep copy it made (an EMA model, a momentum encoder), and the copy. */
  const copiesFrozen: Array<{ line: number; module: Value }> = [];
  /** Where the script freezes parameters (a `requires_grad_(False)` call, a `requires_grad = False` assignment). */
  const freezeSites: Node[] = [];
  /** Where plain names are called (`netD(fake)`), and where backward is: the order the data flows through the models. */
  const calledAt = new Map<string, number[]>();
  let lastBackward = -1;
  let dataBatch: Located<number> | undefined;
  let loraRequested: number | undefined;
  /** The first image of unequal height and width the script makes (see DetectedConfig.rectangularImage). */
  let rectangularImage: DetectedConfig['rectangularImage'];
  /** The image size came from a stored image (uint8, or made in a dataset's __getitem__) that transforms may resize. */
  let storedImage = false;
  /** The image size the script's transforms give (a crop's before a resize's). */
  let transformSize: (Located<number> & { crop: boolean }) | undefined;
  /** Where the script asks timm for the model's data config (its input size). */
  let dataConfigLine: number | undefined;
  /** The call that builds a Hub / config model (`AutoModelForCausalLM.from_pretrained(...)`, `from_config(...)`). */
  let hubModelCall: Node | undefined;
  /** A torchvision video classifier: rebuilt for the frames of the clips the step gives it. */
  let videoModel: { video: VideoModel; classes: number; model: DetectedModel } | undefined;
  /** An optical-flow model, built once the image pairs' size and the iterations the step asks for are read. */
  let flowModel: { flow: FlowModel; model: DetectedModel } | undefined;
  /** The frames of a clip batch the script makes itself (`torch.randn(N, 3, T, H, W)`). */
  let madeClipFrames: Located<number> | undefined;
  /** Every Hugging Face model the script builds (from a checkpoint or a config): the trained one is the one optimized. */
  const hubModels: Array<{ model: DetectedModel; call: Node; dtype?: WeightDtype }> = [];
  /** Functions the script hands a DataLoader as its collate_fn: what they return is the batch the step receives. */
  const collateFunctions = new Set<string>();

  /** The last name each call's callee ends with (`backward`, `zero_grad`), in the order of `calls`. */
  const calledNames: string[] = [];
  // The arguments of the call the loop reads, and questions about them: made once, not once per call.
  let kw: ReadonlyMap<string, Node> = new Map();
  let pos: Node[] = [];
  // Keywords the call received from a dict (`TrainingArguments(**cfg["training"])`), read where none is written out.
  let unpacked: ReadonlyMap<string, Value> | undefined;
  const kwNumber = (key: string): Located<number> | undefined => numberArg(kw.get(key), bindings) ?? unpackedNumber(unpacked?.get(key));
  const kwValue = (key: string): PyValue | undefined => (kw.has(key) ? bindings.evaluate(kw.get(key)) : toPy(unpacked?.get(key)));
  const kwGiven = (key: string): boolean => kw.has(key) || !!unpacked?.has(key);
  /** The line a keyword's value comes from: the keyword written out, or the unpacked dict's entry. */
  const kwLine = (key: string, fallback: number): number => kw.get(key)?.startPosition.row ?? originLine(unpacked?.get(key), fallback);
  const positive = (key: string): boolean => { const v = kwValue(key); return (typeof v === 'number' && v > 0) || v === true; };
  // Asked only of the calls that switch checkpointing on (the argument's value is converted to plain data).
  const enables = (): boolean => (pos[0] ? bindings.evaluate(pos[0]) !== false : kwValue('enable') !== false);
  const scriptRunBuildsVisionModel = calls.some((call) => {
    const made = bindings.value(call);
    return made?.kind === 'call' && made.line === call.startPosition.row && libraryVisionCall(made) !== undefined && bindings.program.ranByScript(call);
  });
  for (const call of calls) {
    const fn = callee(call);
    const name = lastName(fn);
    calledNames.push(name);
    ({ keywords: kw, positional: pos } = callArguments(call));
    unpacked = bindings.program.unpackedKeywords(call);
    const line = call.startPosition.row;

    // A call the program model never ran because it sits in a lambda nobody calls (a model zoo's other entries).
    const notRun = !bindings.value(call) && insideLambda(call);
    // A library vision model built inside a module of the script (`self.encoder = timm.create_model(...)`) is a
    // backbone: the script's module, traced with it, is the model.
    // So is one whose parts a module of the script holds, wherever it is built (a registry's helper function).
    // A library model built only in a function the script's run never calls, where the run builds another, is
    // another registry entry (`resnet18_trunk` beside the `resnet34_trunk` chosen): not the model either.
    const backbone = insideModuleClass(call, bindings) || heldInParts(bindings.value(call), bindings.program) ||
      (scriptRunBuildsVisionModel && !bindings.program.ranByScript(call));
    // Only one the script's run builds: a module class only run with its parameters' defaults (nothing the script
    // determines builds it) does not stand for the model, whatever default backbone it names.
    const built = backbone && !skippedBackbone && bindings.program.ranByScript(call) ? bindings.value(call) : undefined;
    if (built?.kind === 'call' && (libraryVisionCall(built) || libraryVideoCall(built))) skippedBackbone = built;

    // Model.
    // SegFormer (a hierarchical encoder and an all-MLP decode head, a layer net): from a SegformerConfig or a
    // published MiT / SegFormer checkpoint by name.
    const segformerClass = name === 'from_pretrained' ? lastName(fn.slice(0, -'.from_pretrained'.length)) : name;
    if (SEGFORMER_CLASS.test(segformerClass) && !notRun && !detected.model) {
      const configValue = name === 'from_pretrained' ? undefined : bindings.value(kw.get('config') ?? pos[0]);
      const id = name === 'from_pretrained' ? (pos[0] ? bindings.evaluate(pos[0]) : kwValue('pretrained_model_name_or_path')) : undefined;
      const found = configValue?.kind === 'object' && configValue.role === 'hf-config' && configValue.typeName === 'SegformerConfig'
        ? segformerFromConfig(configValue.attrs) : typeof id === 'string' ? segformerFromName(id) : undefined;
      const labels = kwValue('num_labels');
      if (found) {
        const classes = typeof labels === 'number' ? labels : found.classes;
        const head = /ForSemanticSegmentation$/.test(segformerClass);
        const build = (size: number): LayerNetSpec => segformer(found.shape, size, classes, head);
        detected.model = { name: typeof id === 'string' ? id : 'SegformerConfig(...)', source: typeof id === 'string' ? 'catalog' : 'from-config', line,
          spec: build(512), rebuildAt: build, defaultWeightDtype: 'fp32' };
        hubModelCall = call;
        continue;
      }
    }
    // Swin, ConvNeXt (V1, V2) and AST built from their config classes (see hf-vision-configs).
    if ((HIERARCHICAL_MODEL_CLASS.test(name) || AST_MODEL_CLASS.test(name)) && !notRun && !detected.model) {
      const configValue = bindings.value(kw.get('config') ?? pos[0]);
      if (configValue?.kind === 'object' && configValue.role === 'hf-config') {
        const config = `${configValue.typeName}(...)`;
        const net = HIERARCHICAL_MODEL_CLASS.test(name) ? hierarchicalFromConfig(configValue.typeName, name, configValue.attrs) : undefined;
        const ast = configValue.typeName === 'ASTConfig' ? astFromConfig(name, configValue.attrs) : undefined;
        const found = net ?? ast;
        if (net && 'build' in net) {
          detected.model = { name: config, source: 'from-config', line, spec: net.build(net.imageSize), rebuildAt: net.build, defaultWeightDtype: 'fp32', nativeImageSize: net.imageSize };
          hubModelCall = call;
          continue;
        }
        if (ast && 'kind' in ast) {
          const model: DetectedModel = { name: config, source: 'from-config', line, spec: ast, defaultWeightDtype: 'fp32' };
          hubModels.push({ model, call });
          [detected.model, hubModelCall] = [model, call];
          continue;
        }
        if (found && 'undetermined' in found) detected.unresolved ??= { line, reason: t('the model configuration\'s {0} is not a value the script determines', found.undetermined) };
        else if (found && 'unmodelled' in found) detected.unresolved ??= { line, reason: t('the model is built from {0} with {1} set, an option the estimator does not model', configValue.typeName, found.unmodelled) };
        else detected.unresolved ??= { line, reason: t('the model is built from {0}, a configuration class the estimator does not model', configValue.typeName) };
        continue;
      }
    }
    if (name === 'from_pretrained' && !notRun && HF_MODEL_CLASS.test(fn.slice(0, -'.from_pretrained'.length)) && !NOT_A_MODEL_CLASS.test(fn)) {
      const className = lastName(fn.slice(0, -'.from_pretrained'.length));
      const idValue = pos[0] ? bindings.evaluate(pos[0]) : kwValue('pretrained_model_name_or_path');
      const id = typeof idValue === 'string' ? idValue : undefined;
      const entry = id ? findCatalogModel(id) : undefined;
      let spec: TransformerSpec | undefined = entry?.spec;
      let source: ModelSource = 'catalog';
      if (!spec) {
        const json = readLocalConfig(filePath, id);
        spec = json ? specFromConfigJson(json) : undefined;
        source = 'config-json';
      }
      if (!spec && !detected.model) {
        detected.unresolved ??= { line, reason: id ? t('"{0}" is neither in the model catalog nor a local folder with a config.json', id) : t('the model id is not a value the script determines') };
      }
      if (spec) {
        const labels = kwValue('num_labels');
        const task = taskFromClass(className, spec.family);
        const resolved = withClassHead({ ...spec, task: task === 'base' && spec.family === 'vit' ? spec.task : task, numLabels: typeof labels === 'number' ? labels : spec.numLabels }, className);
        const model: DetectedModel = { name: id ?? className, source, line, spec: resolved, defaultWeightDtype: spec.storedDtype };
        const asked = dtypeFrom(kwValue('torch_dtype') ?? kwValue('dtype'));
        const stored = kwValue('torch_dtype') === 'auto' || kwValue('dtype') === 'auto' ? spec.storedDtype : undefined;
        hubModels.push({ model, call, dtype: asked ?? stored });
        if (!detected.model) [detected.model, hubModelCall] = [model, call];
      }
      const dtype = dtypeFrom(kwValue('torch_dtype') ?? kwValue('dtype'));
      const auto = kwValue('torch_dtype') === 'auto' || kwValue('dtype') === 'auto';
      if (dtype) detected.weightDtype = { value: dtype, line };
      else if (auto && detected.model) detected.weightDtype = { value: detected.model.spec.kind === 'transformer' ? detected.model.spec.storedDtype : 'fp32', line };
      const attn = kwValue('attn_implementation');
      if (attn === 'eager' || attn === 'sdpa' || attn === 'flash_attention_2') detected.attention = { value: attn, line };
      continue;
    }
    const value = bindings.value(call);
    if (value?.kind === 'object' && value.role === 'hf-config') {
      const spec = specFromConfigCall(value.typeName, value.attrs);
      const undetermined = undeterminedSize(value.attrs);
      if (spec && undetermined) configSpec = undefined;
      if (spec && !undetermined) configSpec = { spec, line, name: value.typeName };
    }
    // VisionEncoderDecoderModel: an image encoder and a text decoder with cross-attention, built from two configs
    // (`config=VisionEncoderDecoderConfig.from_encoder_decoder_configs(enc, dec)`) or two checkpoints
    // (`from_encoder_decoder_pretrained(enc_id, dec_id)`). Never one of its two configs alone.
    if ((ENCODER_DECODER_CLASS.test(name) || (name === 'from_encoder_decoder_pretrained' && ENCODER_DECODER_CLASS.test(lastName(fn.slice(0, -'.from_encoder_decoder_pretrained'.length))))) && !notRun) {
      const pair = name === 'from_encoder_decoder_pretrained'
        ? [pos[0] ? bindings.evaluate(pos[0]) : kwValue('encoder_pretrained_model_name_or_path'), pos[1] ? bindings.evaluate(pos[1]) : kwValue('decoder_pretrained_model_name_or_path')]
          .map((id) => (typeof id === 'string' ? findCatalogModel(id)?.spec : undefined))
        : encoderDecoderConfigs(bindings.value(kw.get('config') ?? pos[0]));
      const spec = pair ? imageToTextSpec(pair[0], pair[1]) : undefined;
      if (spec && !detected.model) {
        detected.model = { name: `${name === 'from_encoder_decoder_pretrained' ? lastName(fn.slice(0, -'.from_encoder_decoder_pretrained'.length)) : name}(${spec.crossEncoder!.family} + ${spec.family})`,
          source: name === 'from_encoder_decoder_pretrained' ? 'catalog' : 'from-config', line, spec, defaultWeightDtype: 'fp32' };
        hubModelCall = call;
      } else if (!detected.model) {
        detected.unresolved ??= { line, reason: t('{0} pairs an encoder and a decoder the estimator cannot both read (an image transformer and a GPT-2 or BERT-like decoder, from configs or catalog checkpoints)', name) };
      }
      configSpec = undefined;
      continue;
    }
    // `Model(config)` / `from_config(config)`: the config object the argument holds, wherever it was built. (The
    // class-name pattern, which backtracks, is tested last in these conditions.)
    const configArgument = bindings.value(kw.get('config') ?? pos[0]);
    if (configArgument?.kind === 'object' && configArgument.role === 'hf-config' && (name === 'from_config' || HF_MODEL_CLASS.test(name))) {
      const spec = specFromConfigCall(configArgument.typeName, configArgument.attrs);
      // A config that names its dtype (`GPT2Config(dtype="bfloat16")`): from_config builds the weights in it.
      const configDtype = dtypeFrom(toPy(configArgument.attrs.get('dtype') ?? configArgument.attrs.get('torch_dtype')));
      // A size the script gives but whose value is not determined: never the base checkpoint's size in its place.
      const undetermined = undeterminedSize(configArgument.attrs);
      if (spec && undetermined) {
        configSpec = undefined;
        if (!detected.model) detected.unresolved ??= { line, reason: t('the model configuration\'s {0} is not a value the script determines', undetermined) };
      } else if (spec) configSpec = { spec, line: configArgument.line, name: configArgument.typeName, storedDtype: configDtype };
      else if (!detected.model) detected.unresolved ??= { line, reason: t('the model is built from {0}, a configuration class the estimator does not model', configArgument.typeName) };
    }
    // `from_config(config, dtype=torch.bfloat16)`: the weights are built in that dtype.
    if (name === 'from_config') {
      const dtype = dtypeFrom(kwValue('torch_dtype') ?? kwValue('dtype'));
      if (dtype) detected.weightDtype = { value: dtype, line };
    }
    // `AutoConfig.from_pretrained(id)` then `from_config(config)`: the architecture of a catalog id, fresh weights.
    if (configArgument?.kind === 'call' && CONFIG_FROM_PRETRAINED.test(configArgument.path) && (name === 'from_config' || HF_MODEL_CLASS.test(name))) {
      const id = configArgument.args[0]?.kind === 'string' ? configArgument.args[0].value : undefined;
      const entry = id ? findCatalogModel(id) : undefined;
      // Keywords given to from_pretrained override the checkpoint's fields (`n_layer=8`), as attributes set later do.
      const overrides = new Map([...configArgument.kwargs, ...(configArgument.attrs ?? new Map<string, Value>())]);
      if (entry) configSpec = { spec: withConfigAttributes({ ...entry.spec }, overrides), line: configArgument.line, name: id!, storedDtype: entry.spec.storedDtype };
      else if (!detected.model) detected.unresolved ??= { line, reason: id ? t('"{0}" is neither in the model catalog nor a local folder with a config.json', id) : t('the model id is not a value the script determines') };
    }
    if (configSpec && (pos.length > 0 || kw.has('config')) && (name === 'from_config' || HF_MODEL_CLASS.test(name))) {
      const className = name === 'from_config' ? lastName(fn.slice(0, -'.from_config'.length)) : name;
      const spec = withClassHead({ ...configSpec.spec, task: taskFromClass(className, configSpec.spec.family) }, className);
      // ViT-MAE's decoder belongs to the pre-training class; ViTMAEModel is the encoder (and masks all the same).
      if (!/ForPreTraining$/.test(className)) delete spec.decoder;
      // transformers 5 builds from a config in the config's own dtype (AutoConfig of a bf16 checkpoint: bf16).
      const model: DetectedModel = { name: `${configSpec.name}(...)`, source: 'from-config', line, spec, defaultWeightDtype: configSpec.storedDtype ?? 'fp32' };
      hubModels.push({ model, call, dtype: name === 'from_config' ? dtypeFrom(kwValue('torch_dtype') ?? kwValue('dtype')) : undefined });
      if (!detected.model) {
        [detected.model, hubModelCall] = [model, call];
        const attn = kwValue('attn_implementation');
        if (attn === 'eager' || attn === 'sdpa' || attn === 'flash_attention_2') detected.attention = { value: attn, line };
      }
    }
    // The library call this node makes; a method chain on it (`.cuda().to(...)`) holds the same value but is not it.
    const calleeNode = call.childForFieldName('function');
    const chained = calleeNode?.type === 'attribute' && calleeNode.childForFieldName('object')?.type === 'call';
    // Only the node that made the value (same line as the value's creation) is the library call itself.
    const libraryCall = value?.kind === 'call' && !chained && value.line === line ? value.path : '';
    // The arguments a library call ran with, as values: also those a factory adds (`partial(timm.create_model,
    // "resnet50")(num_classes=10)`) and those a `**kwargs` spreads, which the call's own text does not show.
    const made = libraryCall !== '' && value?.kind === 'call' ? value : undefined;
    const libraryArgument = (index: number, key: string): PyValue | undefined =>
      (made ? toPy(made.kwargs.get(key) ?? made.args[index]) : bindings.evaluate(pos[index] ?? kw.get(key)));
    const libraryKeyword = (key: string): PyValue | undefined => (made ? toPy(made.kwargs.get(key)) : kwValue(key));
    // A library model named by a parameter of a function the script's run never calls (run only with its defaults,
    // `def build(arch="resnet18")` reached through a registry the estimator cannot read): the default is no finding.
    const guessed = made && !detected.model && !backbone && libraryVisionCall(made) ? parameterDefaultNaming(call, bindings) : undefined;
    if (guessed) {
      detected.unresolved ??= { line, reason: t('the model is built by {0}() from its parameter {1}, which the script never gives a value it determines', guessed.function, guessed.parameter) };
    }
    if ((libraryCall === 'timm.create_model' || (name === 'create_model' && /timm/.test(fn) && !notRun)) && !detected.model && !backbone && !guessed) {
      const modelName = libraryArgument(0, 'model_name');
      const vision = typeof modelName === 'string' ? findVisionModel(stripTimmTag(modelName)) : undefined;
      if (vision) [detected.model, libraryModelMade] = [visionModel(vision, String(modelName), 'timm', line, libraryKeyword('num_classes'), libraryKeyword), made];
      else detected.unresolved ??= { line, reason: typeof modelName === 'string' ? t('timm model "{0}" is not in the catalog', modelName) : t('the timm model name is not a value the script determines') };
    }
    // torchvision.models.get_model("vit_b_16", ...): the architecture is the name it is given.
    // A detector or a video classifier by that name is built below, as its own builder would be.
    let namedByGetModel: string | undefined;
    if (TORCHVISION_GET_MODEL.test(libraryCall) && !detected.model && !backbone && !guessed) {
      const modelName = libraryArgument(0, 'name');
      const vision = typeof modelName === 'string' ? findVisionModel(modelName) : undefined;
      if (vision) [detected.model, libraryModelMade] = [visionModel(vision, String(modelName), 'torchvision', line, libraryKeyword('num_classes'), libraryKeyword), made];
      else if (typeof modelName === 'string' && (findDetectionModel(modelName) || findVideoModel(modelName))) namedByGetModel = modelName;
      else detected.unresolved ??= { line, reason: typeof modelName === 'string' ? t('torchvision model "{0}" is not in the catalog', modelName) : t('the torchvision model name is not a value the script determines') };
    }
    // torchvision by name, also through `getattr(models, args.arch)(...)`: the program model knows the function.
    const tvMatch = (namedByGetModel ? [libraryCall, namedByGetModel] : null) ?? TORCHVISION_MODEL.exec(libraryCall) ??
      (TORCHVISION_MODEL_NAME.test(fn) ? [fn, fn] : null);
    if (tvMatch && !detected.model && !notRun && !backbone && !guessed && !TORCHVISION_NOT_A_MODEL.test(tvMatch[1]!)) {
      const vision = findVisionModel(tvMatch[1]!);
      const catalogDetector = vision ? undefined : findDetectionModel(tvMatch[1]!);
      const detector = catalogDetector && withTransformSizes(catalogDetector, libraryKeyword('min_size'), libraryKeyword('max_size'));
      if (detector) {
        const classes = libraryKeyword('num_classes');
        const weights = libraryKeyword('weights');
        // The builders load ImageNet backbone weights unless told `weights_backbone=None`; a pretrained backbone's
        // BatchNorms are frozen (buffers).
        const pretrained = weights !== undefined && weights !== null;
        const backboneWeights = !pretrained && libraryKeyword('weights_backbone') !== null;
        // SSD's VGG16 has no norms, SSDlite keeps BatchNorm2d; the others' pretrained backbones have FrozenBatchNorm2d.
        const singleShot = isSingleShot(detector);
        const frozenNorms = !singleShot && (pretrained || backboneWeights);
        // Over any pretrained weights the builders freeze the backbone's lower stages (trainable_backbone_layers: 3
        // unless given; SSD300 4, SSDlite 6, all of its stages); without, every stage trains whatever is asked.
        const givenTrainable = libraryKeyword('trainable_backbone_layers');
        const defaultTrainable = detector.head === 'ssd' ? 4 : detector.head === 'ssdlite' ? 6 : 3;
        const trainableLayers = pretrained || backboneWeights ? (typeof givenTrainable === 'number' ? givenTrainable : defaultTrainable) : undefined;
        // A new box predictor (`model.roi_heads.box_predictor = FastRCNNPredictor(in_features, 2)`, SSD's new
        // classification head): its classes.
        const predictor = made ? replacedPredictorClasses(bindings.program.libraryFreezes.filter((f) => f.model === made)) : undefined;
        const numClasses = predictor ?? (typeof classes === 'number' ? classes : detector.defaultClasses);
        // What it keeps follows the size its transform resizes the images to: the images the step receives. SSD
        // resizes every image to its fixed square: only the images themselves follow their size, taken at that
        // square where the script does not give it (said).
        const found = imageExtent(bindings.program);
        const fixed = detector.fixedSize;
        const extent: (Pick<ImageExtent, 'height' | 'width'> & Partial<ImageExtent>) | undefined =
          found ?? (fixed !== undefined ? { height: fixed, width: fixed } : undefined);
        const options = { classes: numClasses, frozenNorms, pretrained, detections: detectsInEvaluation(detector, numClasses, pretrained),
          imagenetBackbone: backboneWeights, ...(trainableLayers !== undefined ? { trainableLayers } : {}) };
        if (extent) {
          const build = buildDetector(detector, extent.height, extent.width, options, extent.least);
          [detected.model, libraryModelMade] = [{ name: tvMatch[1]!, source: 'torchvision', line, spec: build.spec, rebuildAt: build.rebuildAt, defaultWeightDtype: 'fp32' }, made];
          const { resized } = build;
          detected.detector = {
            value: { name: tvMatch[1]!, height: extent.height, width: extent.width, resizedHeight: resized.height, resizedWidth: resized.width,
              paddedHeight: resized.paddedHeight, paddedWidth: resized.paddedWidth, minSize: detector.minSize, maxSize: detector.maxSize,
              frozenNorms, pretrained, detections: options.detections, head: detector.head, ...(trainableLayers !== undefined ? { trainableLayers } : {}),
              ...(extent.least ? { leastHeight: extent.least.height, leastWidth: extent.least.width } : {}),
              ...(fixed !== undefined ? { fixedSize: fixed, imagesAssumed: !found } : {}) },
            line: extent.line, how: extent.how,
          };
          // The frozen stages' share is the builder's, known exactly.
          const frozenParameters = build.spec.frozenPrefix?.parameters ?? 0;
          if (frozenParameters > 0) detected.frozen = { value: 1, line, exact: frozenParameters / build.spec.parameters };
        } else {
          const count = buildDetector(detector, 800, 800, options).spec.parameters;
          detected.unresolved ??= { line, reason: t('{0} has {1} parameters, but what it keeps follows the size of the images it is given, which the script does not determine', tvMatch[1]!, count.toLocaleString('en-US')) };
        }
      }
      const video = vision || detector ? undefined : findVideoModel(tvMatch[1]!);
      if (video) {
        videoModel = videoDetectedModel(video, tvMatch[1]!, line, libraryKeyword('num_classes'));
        [detected.model, libraryModelMade] = [videoModel.model, made];
      }
      const flow = vision || detector || video ? undefined : findFlowModel(tvMatch[1]!);
      if (flow) {
        // Built for the image pairs and iterations the step gives it (below); forward's defaults until then.
        const model: DetectedModel = { name: tvMatch[1]!, source: 'torchvision', line, spec: flow.build(FLOW_ASSUMED_SIZE, FLOW_ASSUMED_SIZE, flow.defaultUpdates),
          defaultWeightDtype: 'fp32' };
        flowModel = { flow, model };
        [detected.model, libraryModelMade] = [model, made];
      }
      if (vision) [detected.model, libraryModelMade] = [visionModel(vision, tvMatch[1]!, 'torchvision', line, libraryKeyword('num_classes'), libraryKeyword), made];
      else if (!detector && !video && !flow) detected.unresolved ??= { line, reason: t('torchvision model "{0}" is not in the catalog', tvMatch[1]!) };
    }
    // A module the script builds itself, assigned to a variable (`model = Net().cuda()`), not a layer inside another;
    // not a copy of one (an EMA model), which is never trained.
    if (value && (value.kind === 'object' || (value.kind === 'layer' && value.type === 'Sequential')) && customModels.length < MAX_CUSTOM_MODELS &&
      assignedOutsideModule(call, value, bindings) && !customModels.some((m) => m.value === value) && !bindings.program.isCopy(value)) {
      const net = moduleNet(value, bindings.program);
      if (net) customModels.push({ ...net, line, variable: assignedName(call), value });
    }
    // Where the call returns: Python runs an argument's call first (`netD(netG(z))`: the generator, then the critic).
    if (calleeNode?.type === 'identifier') {
      const at = calledAt.get(fn);
      if (at) at.push(call.endIndex);
      else calledAt.set(fn, [call.endIndex]);
    }
    if (name === 'backward') lastBackward = call.startIndex;

    // Batch size, sequence length, image size.
    if (name === 'DataLoader') {
      const b = kwNumber('batch_size') ?? numberArg(pos[1], bindings);
      if (b && !detected.batchSize) detected.batchSize = b;
      const collate = bindings.value(kw.get('collate_fn'));
      if (collate?.kind === 'function') collateFunctions.add(collate.name);
    }
    if (name === 'TrainingArguments' || name === 'SFTConfig' || name === 'Seq2SeqTrainingArguments') {
      const b = kwNumber('per_device_train_batch_size');
      if (b) detected.batchSize = b;
      const acc = kwNumber('gradient_accumulation_steps');
      if (acc) detected.accumulation = acc;
      if (kwValue('bf16') === true) detected.autocast = { value: 'bf16', line: kwLine('bf16', line) };
      if (kwValue('fp16') === true) detected.autocast = { value: 'fp16', line: kwLine('fp16', line) };
      if (kwValue('gradient_checkpointing') === true) detected.checkpointing = { value: true, line: kwLine('gradient_checkpointing', line) };
      const optim = kwValue('optim');
      if (typeof optim === 'string') {
        detected.optimizer = { value: trainerOptimizer(optim), line: kwLine('optim', line) };
        // "adamw_torch" is torch's foreach AdamW; the default ("adamw_torch_fused") and other fused names are not.
        detected.optimizerImpl = optim === 'adamw_torch' ? 'foreach' : 'fused';
      }
      const seq = kwNumber('max_seq_length') ?? kwNumber('max_length');
      if (seq) detected.seqLen = seq;
      if (kwGiven('deepspeed')) detected.strategy = { value: 'zero2', line };
      if (kwGiven('fsdp')) detected.strategy = { value: 'fsdp', line };
      const fsdpOptions = kwValue('fsdp');
      if (typeof fsdpOptions === 'string' && /\bshard_grad_op\b/.test(fsdpOptions)) detected.shardGradOp = { value: true, line };
      detected.usesTrainer = { value: true, line };
    }
    const lightningTrainer = LIGHTNING_TRAINER.test(libraryCall) || (name === 'Trainer' && /^(L|pl)\./.test(fn));
    if (!lightningTrainer && (name === 'Trainer' || name === 'SFTTrainer' || name === 'Seq2SeqTrainer')) detected.usesTrainer = { value: true, line };
    // Lightning's Trainer(precision=...): "16-mixed"/"bf16-mixed" are autocast, "16-true"/"bf16-true" cast the weights.
    if (lightningTrainer) {
      trainerTrain ??= line;
      const precision = kwValue('precision');
      const text = typeof precision === 'number' ? String(precision) : typeof precision === 'string' ? precision : '';
      const where = kw.get('precision')?.startPosition.row;
      if (/^(16|16-mixed)$/.test(text)) detected.autocast = { value: 'fp16', line: where };
      else if (/^bf16(-mixed)?$/.test(text)) detected.autocast = { value: 'bf16', line: where };
      else if (text === 'bf16-true') detected.weightDtype = { value: 'bf16', line: where };
      else if (text === '16-true') detected.weightDtype = { value: 'fp16', line: where };
      const accumulate = kwNumber('accumulate_grad_batches');
      if (accumulate) detected.accumulation = accumulate;
    }
    if (kw.has('max_length') && name !== 'generate' && name !== 'GenerationConfig') {
      const s = kwNumber('max_length');
      // Tokenising the targets (`text_target=`, or assigned to `labels`) gives the decoder's length, not the input's.
      if (s && (kw.has('text_target') || TARGET_VARIABLE.test(assignedName(call) ?? ''))) detected.targetLen ??= s;
      else if (s && !detected.seqLen) detected.seqLen = s;
    }
    // Synthetic or collated data: the shape of the batch the step receives.
    if (TENSOR_FACTORY.test(libraryCall) && value?.kind === 'call') {
      // A tensor the script crops before the model sees it: the crop's sizes.
      const shape = tensorShape(bindings.program.crops.get(value) ?? value);
      // A batch made per step (`torch.randn(BATCH, 3, H, W)` in the loop or a generator), not a whole dataset
      // handed to TensorDataset: its first dimension is the batch size.
      if (shape && shape.dims.length >= 2 && !insideDatasetCall(call) && insideLoopOrGenerator(call)) {
        const first = value.args[0];
        dataBatch ??= { value: shape.dims[0]!, line: originLine(first, shape.line), how: first && 'origin' in first && first.origin ? first.origin.how : 'literal' };
      }
      // (N, S) token ids: S is the sequence; a 1-D randint is a token stream or labels, not a batch's shape.
      if (shape && libraryCall === 'torch.randint' && shape.dims.length === 2) {
        const seq = shape.dims[shape.dims.length - 1]!;
        // Token ids kept as the targets of an encoder-decoder are the decoder's length, not the input's: their own
        // length, as made (the step's call applies its own slice, `tgt[:, :-1]`, to each argument).
        const made = tensorShape(value);
        const targetSeq = made?.dims[made.dims.length - 1];
        if (targetSeq !== undefined && targetSeq >= 8 && TARGET_VARIABLE.test(assignedName(call) ?? '')) {
          detected.targetLen ??= { value: targetSeq, line: made!.line, how: made!.how };
        }
        else if (seq >= 8 && !TARGET_VARIABLE.test(assignedName(call) ?? '') && !detected.seqLen) detected.seqLen = { value: seq, line: shape.line, how: shape.how };
      } else if (shape && shape.dims.length >= 3) {
        // A video clip (C, T, H, W): the channels come before the frames.
        const video = shape.dims.length >= 4 && [1, 3, 4].includes(shape.dims[shape.dims.length - 4]!) && ![1, 3, 4].includes(shape.dims[shape.dims.length - 3]!);
        const [c, h, w] = (video ? [shape.dims[shape.dims.length - 4], ...shape.dims.slice(-2)] : shape.dims.slice(-3)) as [number, number, number];
        if (video && h === w) madeClipFrames ??= { value: shape.dims[shape.dims.length - 3]!, line: shape.line, how: shape.how };
        // A batch made as the model takes it outranks a stored image found before it.
        const stored = storedImageCall(call, kwValue('dtype'));
        if ((c === 1 || c === 3 || c === 4) && h === w && h >= 8 && (!detected.imageSize || (storedImage && !stored))) {
          detected.imageSize = { value: h, line: shape.line, how: shape.how };
          storedImage = stored;
        }
        // Images that are not square (a segmentation set's 512x1024 crops): kept for when no square one is found.
        if ((c === 1 || c === 3 || c === 4) && h !== w && Math.min(h, w) >= 8) rectangularImage ??= { value: { height: h, width: w }, line: shape.line, how: shape.how };
      }
    }
    if (kwValue('use_cache') === false) detected.useCacheOff = true;
    // timm's data config for the model (`resolve_data_config({}, model=model)["input_size"]`): the size the
    // architecture is built for.
    if (TIMM_DATA_CONFIG.test(name)) dataConfigLine ??= line;
    // The image transforms give the size the model sees, whatever size the images are stored or made at: the first
    // crop (a training pipeline's RandomResizedCrop comes before the evaluation's), else the first resize.
    if (RESIZE_OR_CROP.test(name)) {
      const crop = name !== 'Resize';
      const s = numberArg(pos[0] ?? kw.get('size'), bindings);
      if (s && (!transformSize || (crop && !transformSize.crop))) transformSize = { ...s, crop };
    }

    // Precision.
    if (AUTOCAST.test(fn)) {
      // A body the program model did not run (a function only called inside an f-string) has no values: the
      // dtype as written (`torch.bfloat16`) still says which.
      const dtypeNode = kw.get('dtype') ?? pos[1];
      const dtype = dtypeFrom(kwValue('dtype') ?? (pos[1] ? bindings.evaluate(pos[1]) : undefined)) ??
        dtypeFrom(/^torch\.(bfloat16|float16|half)$/.exec(dtypeNode?.text ?? '')?.[1]);
      const enabled = kwValue('enabled');
      // The first autocast is the training loop's in most scripts; evaluation repeats it later.
      if (enabled !== false) detected.autocast ??= { value: dtype === 'bf16' ? 'bf16' : 'fp16', line };
    }
    if (GRAD_SCALER.test(fn)) hasGradScaler = line;
    if (name === 'Accelerator') {
      const mp = kwValue('mixed_precision');
      if (mp === 'bf16' || mp === 'fp16') detected.autocast = { value: mp, line };
    }
    if (name === 'half' && pos.length === 0) detected.weightDtype = { value: 'fp16', line };
    if (name === 'bfloat16' && pos.length === 0 && fn.includes('.')) detected.weightDtype = { value: 'bf16', line };
    if (name === 'to') {
      const dtype = dtypeFrom(kwValue('dtype') ?? pos.map((p) => bindings.evaluate(p)).find((v) => dtypeFrom(v)));
      const receiver = fn.slice(0, -3);
      if (dtype && dtype !== 'fp32' && !/^(x|inputs?|images?|batch|data|pixel_values|input_ids|labels|target)/.test(receiver)) {
        detected.weightDtype = { value: dtype, line };
      }
    }

    // Optimizer.
    // An optimizer the script never builds (another branch's) does not replace one it does.
    const optimizerPassedOver = detected.optimizer !== undefined && bindings.program.passedOver(call);
    // `getattr(torch.optim, cfg["type"])(params, **cfg)`: the optimizer class the program model called, with the
    // keywords it ran with (a config's), which the call's text does not show.
    const optimizerByName = !MODELLED_OPTIMIZER.test(name) && value?.kind === 'call' && value.line === line && TORCH_OPTIMIZER_CLASS.test(value.path) ? value : undefined;
    const optimizerName = optimizerByName ? lastName(optimizerByName.path) : name;
    const optimizerFlag = (key: string): boolean => {
      if (!optimizerByName) return positive(key);
      const given = toPy(optimizerByName.kwargs.get(key));
      return (typeof given === 'number' && given > 0) || given === true;
    };
    if (MODELLED_OPTIMIZER.test(optimizerName) && !fn.includes('Config') && !optimizerPassedOver) {
      const name = optimizerName;
      let kind: OptimizerKind;
      detected.optimizerStates = undefined;
      if (/8bit/.test(name)) kind = 'adam-8bit';
      else if (name === 'Adafactor') kind = 'adafactor';
      // SGD keeps a momentum_buffer with momentum (nesterov needs one too).
      else if (name === 'SGD') kind = optimizerFlag('momentum') ? 'sgd-momentum' : 'sgd';
      else if (name === 'RMSprop') {
        kind = 'rmsprop';
        detected.optimizerStates = 1 + (optimizerFlag('momentum') ? 1 : 0) + (optimizerFlag('centered') ? 1 : 0);
      } else if (name === 'Adagrad') kind = 'adagrad';
      else if (name === 'Adadelta') kind = 'adadelta';
      else if (name === 'SparseAdam') kind = 'sparse-adam';
      else if (name === 'LBFGS') {
        kind = 'lbfgs';
        // history_size pairs of flat vectors (default 100), plus three more it keeps (measured).
        const history = kwValue('history_size');
        const maxIter = kwValue('max_iter');
        lbfgs = { history: typeof history === 'number' && history >= 0 ? history : LBFGS_DEFAULT_HISTORY, maxIter: typeof maxIter === 'number' && maxIter > 0 ? maxIter : 20 };
        detected.optimizerStates = 2 * lbfgs.history + 3;
      } else {
        kind = name === 'Adam' ? 'adam' : 'adamw';
        if (optimizerFlag('amsgrad')) detected.optimizerStates = 3;
      }
      detected.optimizer = { value: kind, line };
      detected.masterCopies = optimizesFullPrecisionCopies(pos[0] ?? kw.get('params'), call) ? line : undefined;
      optimizerArguments.push(call.childForFieldName('arguments')?.text ?? '');
      optimizersMade.push(value ?? UNKNOWN_VALUE);
      if (kwValue('fused') === true) detected.optimizerImpl = 'fused';
      else if (kwValue('foreach') === false) detected.optimizerImpl = 'for-loop';
      if (value) {
        const impl: OptimizerImpl | undefined = kwValue('fused') === true ? 'fused' : kwValue('foreach') === false ? 'for-loop' : undefined;
        optimizerKinds.set(value, { optimizer: detected.optimizer, ...(detected.optimizerStates !== undefined ? { states: detected.optimizerStates } : {}), ...(impl ? { impl } : {}) });
      }
    } else if (isOptimizerClass(name) && !fn.includes('Config') && CAPITALISED.test(name) && !optimizerPassedOver) {
      // An optimizer whose states the estimator does not size (Lion, NAdam, a library's): said, not assumed silently.
      detected.unmodelledOptimizer ??= { value: name, line };
      optimizerArguments.push(call.childForFieldName('arguments')?.text ?? '');
    }

    // Checkpointing, LoRA, freezing.
    // timm's set_grad_checkpointing(True) (its argument defaults to True).
    // Not where the script switches it on under a setting that is off (`if cfg.gradient_checkpointing:`).
    const tensorFunction = CHECKPOINT.test(fn) && checkpointsTensorFunction(call, pos[0], bindings);
    if (tensorFunction && !bindings.program.neverRuns(call)) {
      const chunk = checkpointedLogitElements(call, pos, bindings);
      if (chunk !== undefined && chunk > (detected.recomputedLossChunk?.value ?? 0)) detected.recomputedLossChunk = { value: chunk, line };
    }
    if ((name === 'gradient_checkpointing_enable' || (name === 'set_grad_checkpointing' && enables()) || (CHECKPOINT.test(fn) && !tensorFunction)) &&
      !bindings.program.neverRuns(call)) {
      detected.checkpointing = { value: true, line };
      const receiver = name === 'gradient_checkpointing_enable' ? call.childForFieldName('function')?.childForFieldName('object') : undefined;
      const checkpointed = receiver ? bindings.value(receiver) : undefined;
      if (checkpointed) checkpointedModels.push(checkpointed);
      if (/(^|\.)checkpoint_sequential$/.test(fn)) {
        detected.checkpointSegments = true;
        // checkpoint_sequential(functions, segments, input): how many segments the script asks for.
        const segments = numberArg(pos[1] ?? kw.get('segments'), bindings);
        if (segments && Number.isInteger(segments.value)) detected.checkpointSegmentCount = segments.value;
      }
    }
    if (fn === 'torch.compile' && pos.length > 0 && !bindings.program.neverRuns(call)) detected.compiled = true;
    if (!detected.decodingLoop && (kw.has('past_key_values') || kw.has('past')) && !bindings.program.neverRuns(call)) {
      const loop = enclosingLoops(call)[0];
      const cache = bindings.program.keywordOf(call, kw.has('past_key_values') ? 'past_key_values' : 'past');
      if (loop && cache && cache.kind !== 'none') {
        const iterable = loop.type === 'for_statement' ? bindings.program.valueOf(loop.childForFieldName('right')) : undefined;
        detected.decodingLoop = { value: iterable ? passCount(iterable) : undefined, line };
      }
    }
    if (/^torch\.autograd\.graph\.save_on_cpu$/.test(fn) && !bindings.program.neverRuns(call)) detected.savedOnHost ??= line;
    if (/(^|\.)pack_padded_sequence$/.test(fn) && !bindings.program.neverRuns(call)) detected.packedSequences ??= line;
    if (kwValue('gradient_checkpointing') === true && !detected.checkpointing) detected.checkpointing = { value: true, line };
    if (name === 'LoraConfig') {
      // As the program model ran it: also the keywords a `**cfg["lora"]` spreads.
      const r = libraryKeyword('r');
      const targets = libraryKeyword('target_modules');
      const dropout = libraryKeyword('lora_dropout');
      detected.lora = {
        value: {
          rank: typeof r === 'number' ? r : 8,
          // PEFT's default lora_dropout is 0 (nn.Identity).
          dropout: typeof dropout === 'number' ? dropout : 0,
          targetModules: Array.isArray(targets) ? targets.filter((t): t is string => typeof t === 'string') : typeof targets === 'string' ? [targets] : [],
        },
        line,
      };
    }
    if (name === 'get_peft_model') loraRequested = line;
    if ((name === 'freeze_feature_encoder' || name === 'freeze_feature_extractor') && !bindings.program.neverRuns(call)) detected.featureEncoderFrozen ??= line;
    // Freezing a copy of the model (an EMA model's `requires_grad_(False)`) freezes nothing that is trained.
    if (name === 'requires_grad_' && bindings.evaluate(pos[0]) === false && !freezesCopy(calleeNode, bindings)) {
      detected.frozen = { value: 1, line };
      frozenModules.push(moduleFrozenBy(calleeNode, bindings));
      freezeSites.push(call);
    } else if (name === 'requires_grad_' && bindings.evaluate(pos[0]) === false) copiesFrozen.push({ line, module: moduleFrozenBy(calleeNode, bindings) });

    // Training or inference, data parallelism.
    if (name === 'backward') {
      hasBackward ??= line;
      backwardCall ??= call;
    }
    // `if (i + 1) % accum == 0: optimizer.step()`: the optimizer steps every `accum` micro-batches.
    if (name === 'step' && !accumulationGuard) accumulationGuard = everyNth(call, bindings);
    if (name === 'step' && fn.includes('.')) stepCalls.push(call);
    if (name === 'train' && /trainer/i.test(fn)) trainerTrain ??= line;
    if (name === 'zero_grad') hasZeroGrad = true;
    if (name === 'generate' && fn.includes('.') && !detected.generate) {
      // The call's own keywords win over a GenerationConfig it is given (`generation_config=gen_cfg`).
      const generationConfig = bindings.value(kw.get('generation_config'));
      const setting = (key: string): PyValue | undefined =>
        kwValue(key) ?? (generationConfig?.kind === 'call' && /(^|\.)GenerationConfig$/.test(generationConfig.path) ? toPy(generationConfig.kwargs.get(key)) : undefined);
      const newTokens = setting('max_new_tokens');
      const maxLength = setting('max_length');
      const beams = setting('num_beams');
      const returned = setting('num_return_sequences');
      // The prompts' rows: the batch generate is given (made in a helper, outside any loop).
      const given = bindings.value(kw.get('input_ids') ?? pos[0]);
      const prompts = given?.kind === 'call' ? tensorShape(given) : undefined;
      const rows = prompts && prompts.dims.length === 2 && prompts.dims[0]! > 0 && given?.kind === 'call'
        ? { value: prompts.dims[0]!, ...(prompts.dimOrigins?.[0] ?? firstSizeOrigin(given) ?? { line: prompts.line, how: prompts.how }) } : undefined;
      detected.generate = {
        value: {
          ...(typeof newTokens === 'number' ? { newTokens } : {}), ...(typeof maxLength === 'number' ? { maxLength } : {}),
          ...(typeof beams === 'number' && Number.isInteger(beams) && beams > 1 ? { beams } : {}),
          ...(typeof returned === 'number' && Number.isInteger(returned) && returned > 1 ? { returnSequences: returned } : {}),
          ...(rows ? { rows } : {}),
        },
        line,
      };
    }
    if (name === 'zero_grad' && kwValue('set_to_none') === false) detected.zeroGradKeepsBuffers ??= line;
    if (NO_GRAD.test(fn)) hasNoGrad ??= line;
    if (DDP_CLASS.test(fn) || name === 'DDP') detected.strategy = { value: 'ddp', line };
    if (FSDP_CLASS.test(fn) || name === 'FSDP' || name === 'fully_shard') {
      detected.strategy = { value: 'fsdp', line };
      const sharding = kw.get('sharding_strategy')?.text.replace(WHITESPACE, '') ?? '';
      if (/(^|\.)SHARD_GRAD_OP$/.test(sharding) || kwValue('reshard_after_forward') === false) detected.shardGradOp = { value: true, line };
    }
    if (name === 'initialize' && fn.startsWith('deepspeed')) detected.strategy ??= { value: 'zero2', line };
  }

  // `param.requires_grad = False` assignments.
  for (const assignment of assignments) {
    const left = assignment.childForFieldName('left');
    const right = assignment.childForFieldName('right');
    if (left?.text.endsWith('.requires_grad') && right?.type === 'false' && !freezesCopy(left, bindings)) {
      detected.frozen ??= { value: 1, line: left.startPosition.row };
      frozenModules.push(moduleFrozenBy(left, bindings));
      freezeSites.push(left);
    } else if (left?.text.endsWith('.requires_grad') && right?.type === 'false') copiesFrozen.push({ line: left.startPosition.row, module: moduleFrozenBy(left, bindings) });
    if (left?.text.endsWith('.use_cache') && right?.type === 'false') detected.useCacheOff = true;
    if (left && /(^|\.)cudnn\.benchmark$/.test(left.text) && right?.type === 'true') detected.cudnnBenchmark ??= left.startPosition.row;
  }
  // DeepSpeed config dicts: {"zero_optimization": {"stage": N}}.
  const zero = /["']stage["']\s*:\s*([0-3])/.exec(text);
  if (zero && /zero_optimization/.test(text)) {
    const stage = Number(zero[1]);
    const lineOf = splitLines(text.slice(0, zero.index)).length - 1;
    if (stage > 0) detected.strategy = { value: (['zero1', 'zero2', 'zero3'] as const)[stage - 1], line: lineOf };
  }

  // SparseAdam rejects dense gradients: beside another optimizer (an embedding-heavy recommender's dense part under
  // Adagrad), the other one is the model's optimizer, whichever the script builds last.
  const sparseAdam = [...optimizerKinds.values()].find((kind) => kind.optimizer.value === 'sparse-adam');
  const denseOptimizer = [...optimizerKinds.values()].reverse().find((kind) => kind.optimizer.value !== 'sparse-adam');
  if (sparseAdam && denseOptimizer) {
    detected.optimizer = denseOptimizer.optimizer;
    detected.optimizerStates = denseOptimizer.states;
    detected.optimizerImpl = denseOptimizer.impl;
    detected.sparseAdamBeside = sparseAdam.optimizer.line;
  }
  if (lbfgs && detected.optimizer?.value === 'lbfgs') {
    const pairs = lbfgsPairsKept(lbfgs, stepCalls, calls, bindings);
    if (pairs !== undefined) detected.optimizerStates = 2 * pairs + 3;
  }
  // Optimizers given tensors of the script's (`LBFGS([img])`): the tensors train; their first axis is the batch.
  detected.optimizedTensors = optimizedTensors(optimizersMade);
  if (detected.optimizedTensors) {
    const { dims, line, how } = detected.optimizedTensors;
    dataBatch = { value: dims[0]!, line, how };
    // An image batch (N, C, H, W) of square images: their side.
    if (dims.length === 4 && dims[2] === dims[3]) detected.imageSize ??= { value: dims[2]!, line, how };
  }
  // With one library vision model held by the optimizers, that model is the one trained (not a frozen teacher built
  // first), and the other library vision models on the GPU cost their weights.
  const trainedLibrary = libraryModelMade && detected.model ? libraryModelsUpdated(optimizersMade) : [];
  if (trainedLibrary.length === 1) {
    const trained = trainedLibrary[0]!;
    const student = trained !== libraryModelMade ? libraryVisionModel(trained) : undefined;
    if (student) [detected.model, libraryModelMade] = [student, trained];
    if (student || trained === libraryModelMade) {
      const others = [...bindings.program.onDevice].filter((v) => v !== trained && v.kind === 'call' && !bindings.program.isCopy(v))
        .map((v) => libraryVisionModel(v)).filter((m): m is DetectedModel => m !== undefined);
      if (others.length > 0) {
        const parameters = others.reduce((sum, m) => sum + specParameters(m.spec), 0);
        detected.untrainedModel = { value: { name: others.map((m) => m.name).join(' + '), parameters }, line: others[0]!.line };
      }
      // Freezing only the other models freezes nothing that is trained.
      if (frozenModules.length > 0 && frozenModules.every((module) => module !== trained && libraryVisionModel(module))) detected.frozen = undefined;
    }
  }
  // Library models trained one after the other (a teacher trained first, then a student distilled from it), each by
  // an optimizer of its own stepped in loops of its own: the script peaks in the phase of the larger model, with
  // what the phases before it leave on the GPU (their models' weights). Freezing a model once its phase is over (the
  // teacher frozen for the distillation) freezes nothing of its own phase.
  const phases = trainedLibrary.length > 1 ? sequentialPhases(trainedLibrary, optimizersMade, calls, bindings) : undefined;
  if (phases) {
    const sized = phases.map((phase) => ({ ...phase, model: libraryVisionModel(phase.model) }));
    const largest = sized.reduce((best, phase) => (phase.model && (!best.model || specParameters(phase.model.spec) > specParameters(best.model.spec)) ? phase : best));
    if (largest.model) {
      [detected.model, libraryModelMade] = [largest.model, phases[sized.indexOf(largest)]!.model];
      const kind = optimizerKinds.get(largest.optimizer);
      if (kind) {
        detected.optimizer = kind.optimizer;
        detected.optimizerStates = kind.states;
        detected.optimizerImpl = kind.impl;
      }
      const earlier = sized.slice(0, sized.indexOf(largest)).map((phase) => phase.model).filter((m): m is DetectedModel => m !== undefined);
      if (earlier.length > 0) {
        const parameters = earlier.reduce((sum, m) => sum + specParameters(m.spec), 0);
        detected.untrainedModel = { value: { name: earlier.map((m) => m.name).join(' + '), parameters }, line: earlier[0]!.line };
      }
      if (frozenModules.length > 0 && frozenModules.every((module) => phases.some((phase) => phase.model === module))) detected.frozen = undefined;
      const named = (value: Value): string => (value.kind === 'call' ? libraryModelName(value) : undefined) ?? '?';
      const unsized = phases.filter((_, i) => !sized[i]!.model).map((phase) => named(phase.model));
      detected.sequentialPhases = { value: sized.map((phase, i) => phase.model?.name ?? named(phases[i]!.model)), line: largest.model.line,
        ...(unsized.length > 0 ? { unsized } : {}) };
    }
  }
  // A library vision model the step runs only under no_grad (a frozen vision tower) beside a hub model it runs with
  // grad before backward (a frozen language model the loss flows back through to a projector of the script): the hub
  // model is the step's model, and the vision tower costs its weights.
  const towerBeside = libraryModelMade && detected.model && !hubModelCall && !detected.detector && !detected.untrainedModel
    ? hubModelRunWithGrad(calls, bindings.program, libraryModelMade, hubModels) : undefined;
  if (towerBeside && detected.model) {
    const tower = detected.model;
    [detected.model, hubModelCall, libraryModelMade] = [towerBeside.model, towerBeside.call, undefined];
    detected.weightDtype = towerBeside.dtype ? { value: towerBeside.dtype, line: towerBeside.model.line } : undefined;
    detected.imageSize = undefined;
    // Counted in units of the hub model's weights, as the other models beside a trained one are.
    const units = dtypeBytes(tower.defaultWeightDtype ?? 'fp32') / dtypeBytes(towerBeside.dtype ?? towerBeside.model.defaultWeightDtype ?? 'fp32');
    detected.untrainedModel = { value: { name: tower.name, parameters: specParameters(tower.spec) * units }, line: tower.line };
  }
  if (libraryModelMade && detected.model && !detected.detector) {
    // A phase's model frozen once its phase is over (for the next phase's distillation) trains whole in its own; a
    // network an optimised input runs through keeps what backward needs to reach that input, frozen or not.
    if (!detected.sequentialPhases && !detected.optimizedTensors) applyVisionFreezing(detected, libraryModelMade, bindings.program);
    // `vgg19(weights=None).features`: the script keeps only the parts that attribute names.
    const path = partReadAtCall(calls, bindings, libraryModelMade);
    const kept = path !== undefined ? withPartsRead(detected.model, path) : undefined;
    if (kept) detected.model = kept;
    const spec = detected.model.spec;
    const held = spec.kind === 'layers' ? parametersOptimized(optimizersMade, libraryModelMade, spec) : undefined;
    if (held && spec.kind === 'layers' && held.value < spec.parameters) detected.optimizerParameters = held;
  }
  // Several Hugging Face models (a distillation's frozen teacher from a checkpoint, its student from a config): the one
  // whose parameters an optimizer holds is the model trained; the others on the GPU cost their weights.
  const firstHub = hubModels.find(({ call }) => call === hubModelCall);
  if (hubModels.length > 1 && firstHub && detected.model === firstHub.model) {
    const updated = libraryModelsUpdated(optimizersMade);
    const made = (call: Node): Value | undefined => bindings.value(call);
    const optimized = hubModels.filter(({ call }) => { const value = made(call); return value !== undefined && updated.includes(value); });
    if (optimized.length === 1) {
      const trained = optimized[0]!;
      const trainedValue = made(trained.call);
      [detected.model, hubModelCall] = [trained.model, trained.call];
      // The dtype another model was loaded in (`from_pretrained(teacher, torch_dtype=torch.bfloat16)`) is not the
      // trained model's.
      const dtypeLine = detected.weightDtype?.line;
      if (dtypeLine !== undefined && hubModels.some((other) => other !== trained && other.model.line === dtypeLine)) {
        detected.weightDtype = trained.dtype ? { value: trained.dtype, line: trained.model.line } : undefined;
      }
      const others = hubModels.filter((other) => {
        const value = made(other.call);
        return other !== trained && value !== undefined && value !== trainedValue && bindings.program.onDevice.has(value);
      });
      if (others.length > 0 && !detected.untrainedModel) {
        // Counted in units of the trained model's weights: a bf16 teacher beside an fp32 student costs half as much a parameter.
        const bytes = (dtype: WeightDtype | undefined): number => dtypeBytes(dtype ?? 'fp32');
        const trainedBytes = bytes(detected.weightDtype?.value ?? trained.model.defaultWeightDtype);
        const parameters = others.reduce((sum, other) => sum + specParameters(other.model.spec) * bytes(other.dtype ?? other.model.defaultWeightDtype) / trainedBytes, 0);
        detected.untrainedModel = { value: { name: others.map((other) => other.model.name).join(' + '), parameters }, line: others[0]!.model.line };
      }
      // Freezing only the other models freezes nothing that is trained.
      if (frozenModules.length > 0 && frozenModules.every((module) => module !== trainedValue)) detected.frozen = undefined;
    } else if (optimized.length === 2 && !detected.untrainedModel) {
      // Two trained by the optimizers (ELECTRA's generator and discriminator): the first built is the model, the
      // other is trained in the same step beside it, each checkpointed only where its own switch is on.
      const [first, second] = optimized as [(typeof optimized)[number], (typeof optimized)[number]];
      // Named by their classes: both may come from one config class (`ElectraForMaskedLM(ElectraConfig(...))`).
      const byClass = (hub: (typeof optimized)[number]): DetectedModel => ({ ...hub.model, name: `${lastName(callee(hub.call))}(${hub.model.name})` });
      [detected.model, hubModelCall] = [byClass(first), first.call];
      const checkpointed = (call: Node): boolean | undefined => {
        if (checkpointedModels.length === 0) return undefined;
        const value = made(call);
        return checkpointedModels.some((module) => module === value);
      };
      if (checkpointed(first.call) === false) detected.checkpointing = undefined;
      const towerCheckpointed = checkpointed(second.call);
      pairedHubModel = { value: { ...byClass(second), ...(towerCheckpointed !== undefined ? { checkpointing: towerCheckpointed } : {}) }, line: second.model.line };
    }
  }
  // The last call of each model before the last backward (later ones sample or evaluate) orders them.
  const transformed = !detected.imageSize || storedImage;
  if (transformSize && transformed) detected.imageSize = { value: transformSize.value, line: transformSize.line, how: transformSize.how };
  else if (dataConfigLine !== undefined && detected.model?.nativeImageSize && transformed) {
    // The transforms take their size from timm's data config: the model's own input size, not the stored images'.
    detected.imageSize = { value: detected.model.nativeImageSize, line: dataConfigLine, how: 'config' };
  }
  const lastCalled = new Map([...calledAt].map(([fn, at]) => [fn, at.reduce((last, i) => (i < lastBackward && i > last ? i : last), -1)]));
  // A model is updated where an optimizer is given its parameters or its submodules', by name or through a variable
  // (`params = list(g.parameters()) + list(d.parameters())`).
  const optimizedModules = modulesUpdated(optimizersStepping(calls, optimizersMade, bindings));
  const updated = (m: (typeof customModels)[number]): boolean =>
    (m.variable !== undefined && updatedByOptimizer(m.variable, optimizerArguments)) || optimizedModules.some((module) => holdsModule(m.value, module));
  // An ensemble stacked by torch.func (`stack_module_state(models)`): one member stands for the model's layers.
  const ensemble = stackedEnsemble(calls, bindings);
  if (ensemble) {
    // The skeleton functional_call runs the stacked parameters through (`base.to("meta")`) is no model of its own.
    const skeletons = customModels.filter((m) => !bindings.program.onDevice.has(m.value));
    for (const skeleton of skeletons) customModels.splice(customModels.indexOf(skeleton), 1);
  }
  if (ensemble) {
    // The members run under vmap with their parameters stacked: traced as such (what the batching rules keep).
    const member = ensemble.members[0]!;
    const net = moduleNet(member, bindings.program, { stackedMembers: ensemble.members.length });
    const found = customModels.findIndex((m) => m.value === member);
    if (net && found >= 0) customModels[found] = { ...net, line: customModels[found]!.line, variable: customModels[found]!.variable, value: member };
    else if (net && customModels.length === 0) customModels.push({ ...net, line: ensemble.line, value: member });
  }
  const customModel = trainedModel(customModels, updated, lastCalled);
  const trainedVariables = customModel ? customModels.filter((m) => customModel.className.split(' + ').includes(m.className)).map((m) => m.variable) : [];
  const modelVariables = new Set(trainedVariables.filter((v): v is string => v !== undefined));
  // A stacked ensemble runs through the function vmap makes (`ensemble_forward = vmap(fmodel)`): its calls are the
  // model's forwards (where the step calls zero_grad, what it keeps of the output).
  if (ensemble) for (const name of vmappedNames(calls)) modelVariables.add(name);
  const hubModelName = hubModelCall ? assignedName(hubModelCall) : undefined;
  if (hubModelName) modelVariables.add(hubModelName);
  // The model's forwards (`model(x)`), found once for the questions below.
  const forwards = modelVariables.size === 0 ? [] : calls.filter((call) => callsModel(call, modelVariables));
  // A stacked ensemble's forward maps the members over the first axis of the step's input ((members, batch, ...)):
  // the batch each member sees is the second.
  const memberBatch = ensemble ? ensembleMemberBatch(forwards, bindings, ensemble.members.length) : undefined;
  if (memberBatch) dataBatch = memberBatch;
  detected.output = modelOutputUse(calls, calledNames, forwards);
  detected.graphFreedOnReturn = graphFreedOnReturn(forwards);
  detected.outputObjectDropped = outputObjectDropped(forwards);
  // A library model (torchvision, timm) is called through the variable it was assigned to: its forwards say whether
  // an inference loop scores the outputs, as the script's own model's do.
  const libraryVariables = new Set(libraryModelMade && forwards.length === 0
    ? calls.filter((call) => bindings.value(call) === libraryModelMade).map(assignedName).filter((v): v is string => v !== undefined) : []);
  const scoredForwards = libraryVariables.size > 0 ? calls.filter((call) => callsModel(call, libraryVariables)) : forwards;
  detected.forwardsWithoutLabels = forwardsWithoutLabels(scoredForwards);
  if (detected.forwardsWithoutLabels !== undefined) detected.outputsUnscored = outputsUnscored(scoredForwards);
  detected.zeroGradAfterForward = zeroGradAfterForward(calls, calledNames, forwards);
  if (gradientsFreedAfterSteps(calls, calledNames, bindings)) detected.gradientsFreedAfterSteps = true;
  const hubValue = hubModelCall && bindings.value(hubModelCall);
  // A hub model given `inputs_embeds` the step builds (image tokens joined before the text's): its sequence is theirs.
  const embedded = hubValue ? forwards.filter((call) => !underNoGrad(call)).map((call) => embeddedSequence(bindings.program, call, hubValue, embeddedSources(call, bindings.program))).find((found) => found !== undefined) : undefined;
  if (embedded) detected.seqLen = embedded;
  const derivative = inputDerivativeOrder(calls);
  detected.inputDerivatives = derivative;
  detected.perSampleGradients = perSampleGradients(calls);
  // Of models trained together (a GAN's), the derivative differentiates one model's forward (the critic's, for a
  // gradient penalty): its own activations say how the derivative's graph grows, and only its share grows.
  const penalised = derivative && customModel?.className.includes(' + ')
    ? differentiatedModel(derivative.call, customModels.filter((m) => customModel.className.split(' + ').includes(m.className)), bindings.program) : undefined;
  if (detected.inputDerivatives) {
    // The activations the differentiated model's own class calls (the penalised critic's, else the trained model's),
    // else those the script calls with grad on: not a no_grad data generator's (a simulator's torch.sin).
    const trained = penalised ?? customModels.find((m) => m.className === customModel?.className);
    const activationNames = calls.map((call, i) => calledNames[i]! + (inPlaceCall(call) ? '_' : ''));
    const ownNames = trained && namesCalledBy(trained.value, calls, activationNames);
    const order = detected.inputDerivatives.value;
    detected.derivativeActivation = (ownNames && derivativeActivationOf(ownNames, order))
      ?? derivativeActivationOf(activationNames.filter((_, i) => !underNoGrad(calls[i]!)), order);
  }
  // A module of the script around a library ViT (`self.backbone = timm.create_model("vit_small_patch16_224",
  // num_classes=0)` and a head of its own): the layer net cannot hold a transformer, so the estimate is the library
  // model's, and the wrapper's own modules are said not counted (libraryWrapped), never the head alone.
  const heldTransformer = !detected.model && customModel ? libraryTransformerHeld(customModels, customModel) : undefined;
  if (heldTransformer) [detected.model, libraryModelMade] = [heldTransformer.model, heldTransformer.made];
  /** The first frozen copy the trained model holds (see copiesFrozen). */
  const heldFrozenCopy = (info: CustomModuleInfo): { line: number } | undefined => {
    const trainedValues = customModels.filter((m) => info.className.split(' + ').includes(m.className)).map((m) => m.value);
    return copiesFrozen.find((frozen) => trainedValues.some((trained) => holdsValue(trained, frozen.module)));
  };
  if (!detected.model && customModel) {
    const info = customModel;
    // The tensor the step feeds the model: (batch, sequence) token ids, or a batch of images.
    const fed = info.inputShape;
    if (fed && info.inputKind === 'tokens' && fed.dims.length === 2) {
      detected.seqLen ??= { value: fed.dims[1]!, ...(fed.dimOrigins?.[1] ?? { line: fed.line, how: fed.how }) };
      dataBatch ??= { value: fed.dims[0]!, ...(fed.dimOrigins?.[0] ?? { line: fed.line, how: fed.how }) };
    }
    // The token ids the loader's data gives the step's call (its dataset's samples, or what its collate_fn pads them
    // to): the input's length, and the decoder's where another argument has a length of its own (`tgt[:, :-1]`).
    if (info.inputKind === 'tokens' && info.stepTokens) {
      detected.seqLen ??= info.stepTokens.source;
      detected.targetLen ??= info.stepTokens.target;
    }
    // (batch, features) rows fed to a net of linears (a minibatch picked from a rollout buffer): the batch.
    if (fed && info.inputKind === 'vector' && fed.dims.length === 2) dataBatch ??= { value: fed.dims[0]!, ...(fed.dimOrigins?.[0] ?? { line: fed.line, how: fed.how }) };
    // The samples the step's tensors hold before the model's call folds them into rows (8,192 rays of 128 points
    // each), found by running the loop body at its sizes: the batch.
    if (info.foldedInput?.samplesPerStep !== undefined) dataBatch ??= { value: info.foldedInput.samplesPerStep, line: info.foldedInput.line, how: 'loop' };
    // The batch a collate_fn builds: (batch, sequence) token ids padded or cropped to a length it is given, whatever
    // length the model could take (a positional table of 4,096 beside a crop to 512).
    if (info.inputKind === 'tokens') detected.seqLen ??= collatedSequence(bindings.program, collateFunctions);
    // One sample a Dataset makes (a 2-second waveform of 32,000 samples, S token ids): its length is the sequence.
    if (info.inputKind === 'tokens') detected.seqLen ??= info.sampleLength;
    const size = info.inputKind === 'image' ? (detected.imageSize?.value ?? 224) : info.inputKind === 'tokens' ? (detected.seqLen?.value ?? 512) : 1;
    // The targets' own length, for the arguments of the step's call that are target tokens (an encoder-decoder's).
    detected.targetLen ??= firstBinding(bindings, TARGET_NAMES);
    const targetLen = info.inputKind === 'tokens' ? detected.targetLen?.value : undefined;
    const rebuildAt = (at: number, batch?: number): LayerNetSpec => info.build(at, targetLen, batch);
    const spec = rebuildAt(size);
    if (penalised && detected.inputDerivatives && spec.savedElementsPerSample > 0) {
      const share = penalised.build(size, targetLen).savedElementsPerSample / spec.savedElementsPerSample;
      if (share > 0 && share < 1) detected.derivativeModel = { name: penalised.className, share, forwards: penalised.forwards };
    }
    // Layers whose sizes the script does not determine count 0 parameters: a model of nothing but those is unresolved.
    if (info.libraryParts) {
      detected.unresolved ??= { line: info.line, reason: t('{0} holds parts of a library model that the catalog cannot size ({1}): a block inside a stage, a model it builds as one piece, or one built from arguments the script does not determine', info.className, info.libraryParts.join(', ')) };
    } else if (info.undeterminedContainers) {
      // Never sized as if the container held nothing: its layers are unknown, not absent.
      detected.unresolved ??= { line: info.line, reason: t('{0} holds a container whose modules the script does not determine (line {1}): their sizes are not known', info.className, String(info.undeterminedContainers[0]! + 1)) };
    } else if (info.undeterminedSize) {
      detected.unresolved ??= { line: info.line, reason: t('the layer sizes of {0} are not values the script determines', info.className) };
    } else if (spec.kind === 'layers' && spec.forwardUntraced && info.holdsLibraryModel) {
      // The walk in build order has none of the library model's layers: neither what they keep nor how they shrink
      // the image (a backbone's stride of 32 left out, the head's maps come out up to 1,024 times too large).
      detected.unresolved ??= { line: info.line, reason: t('forward() of {0} could not be followed, and it holds a library model whose layers the walk in build order does not have (what they keep, how they resize the image): its activations are not known', info.className) };
    } else if (spec.kind === 'layers' && spec.forwardUntraced && (spec.mapGrowth ?? 1) > MOST_WALKED_MAP_GROWTH) {
      // The layers in build order upsample far past the input: branches that run side by side (an FPN's heads, one
      // per scale), not one after another, so the walk's figure would be absurd (terabytes), not an estimate.
      detected.unresolved ??= { line: info.line, reason: t('forward() of {0} could not be followed, and its layers in the order they are built make a map {1} times the input image\'s area (branches that run side by side, read as one chain): its activations are not known', info.className, String(Math.round(spec.mapGrowth!))) };
    } else if (allFinite(spec) && (spec.kind !== 'layers' || spec.parameters > 0)) {
      detected.model = { name: info.className, source: 'custom', line: info.line, spec, rebuildAt, defaultWeightDtype: 'fp32' };
      if (info.unknownLayers.length > 0) detected.unknownLayers = info.unknownLayers;
      if (info.foldedInput) detected.foldedInput = { value: info.foldedInput.text, line: info.foldedInput.line, rowsPerSample: info.foldedInput.rowsPerSample };
      // The program model ran the script's requires_grad_(False) calls: the frozen share is known, not assumed.
      const total = spec.kind === 'layers' ? spec.parameters : 0;
      if (info.frozenParameters > 0 && total > 0 && detected.frozen) detected.frozen = { ...detected.frozen, exact: info.frozenParameters / total };
      // A frozen copy of one of its modules that the model holds (MoCo's momentum key encoder): the model's own
      // parameters, never trained.
      else if (info.frozenParameters > 0 && total > 0 && heldFrozenCopy(info)) detected.frozen = { value: 1, line: heldFrozenCopy(info)!.line, exact: info.frozenParameters / total };
      // Frozen for another model's step and unfrozen for its own, in one loop: every parameter is trained.
      else if (info.frozenParameters === 0 && info.freezesInTurn && detected.frozen) detected.frozen = { ...detected.frozen, exact: 0 };
      // Every freezing in a method of a module the trained model does not hold (a perceptual loss freezing its VGG in
      // its __init__): nothing of the trained model is frozen.
      else if (info.frozenParameters === 0 && detected.frozen && freezeSites.length > 0) {
        const trainedValues = customModels.filter((m) => info.className.split(' + ').includes(m.className)).map((m) => m.value);
        // Or a module of its own the trained model does not hold (an EMA model built anew from the same class).
        const trainedApart = trainedValues.filter((trained) => !frozenModules.includes(trained));
        const apart = (i: number): boolean => isModuleValue(frozenModules[i]!) && trainedApart.length > 0 &&
          !trainedApart.some((trained) => holdsValue(trained, frozenModules[i]!));
        if (freezeSites.every((site, i) => freezesOutside(site, trainedValues, bindings) || apart(i))) {
          detected.frozen = undefined;
          // Built anew from the trained model's class and moved to the GPU: one more model's weights, never trained.
          const rebuilt = frozenModules.find((module, i) => apart(i) && module.kind === 'object' && module.cls !== undefined &&
            trainedApart.some((trained) => trained.kind === 'object' && trained.cls === module.cls) && bindings.program.onDevice.has(module));
          const site = rebuilt ? freezeSites[frozenModules.indexOf(rebuilt)]! : undefined;
          // Named where it is frozen (`ema = UNet(...).requires_grad_(False)`), else by any name bound to it.
          const target = site?.parent?.type === 'assignment' ? site.parent.childForFieldName('left') : undefined;
          const bound = target?.type === 'identifier' ? target.text : undefined;
          const name = rebuilt && (bound ?? [...bindings.program.assigned].find(([, values]) => values.includes(rebuilt))?.[0]);
          if (site && name && !detected.untrainedModel) detected.untrainedModel = { value: { name, parameters: specParameters(spec) }, line: site.startPosition.row };
        }
      }
      detected.unresolved = undefined;
    } else {
      // Built from values the script does not determine (a config never defined where the model is made): no figure.
      detected.unresolved ??= { line: info.line, reason: t('the layer sizes of {0} are not values the script determines', info.className) };
    }
  }
  // A stacked ensemble's model is its members' stacked parameters, all trained, over the layers of one member.
  if (ensemble && customModels.length === 1 && customModels[0]!.value === ensemble.members[0] && detected.model?.source === 'custom' && detected.model.spec.kind === 'layers') {
    const members = ensemble.members.length;
    const stacked = (spec: LayerNetSpec): LayerNetSpec => ({ ...spec, parameters: spec.parameters * members, castParameters: spec.castParameters * members });
    const { spec, rebuildAt } = detected.model;
    detected.model = { ...detected.model, spec: stacked(spec), ...(rebuildAt ? { rebuildAt: (size: number) => stacked(rebuildAt(size)) } : {}) };
    const originalsOnDevice = ensemble.members.every((member) => bindings.program.onDevice.has(member));
    detected.ensemble = { value: members, line: ensemble.line, originalsOnDevice };
  }
  // A torchvision video model a module of the script holds whole (`self.net = s3d(num_classes=174)` in a
  // LightningModule): the model, built for the step's clips below.
  const heldVideo = !detected.model && !detected.unresolved && skippedBackbone?.kind === 'call' ? libraryVideoCall(skippedBackbone) : undefined;
  if (heldVideo && skippedBackbone?.kind === 'call') {
    videoModel = videoDetectedModel(heldVideo.video, heldVideo.name, skippedBackbone.line, toPy(skippedBackbone.kwargs.get('num_classes')));
    [detected.model, libraryModelMade] = [videoModel.model, skippedBackbone];
  }
  if (!detected.model && !detected.unresolved && skippedBackbone) {
    detected.model = libraryVisionModel(skippedBackbone);
    libraryModelMade = skippedBackbone;
    // Its new head or stem, set inside the module that holds it (`net.conv1 = nn.Conv2d(...)` in __init__).
    if (detected.model) applyVisionFreezing(detected, skippedBackbone, bindings.program);
  }
  // Where the script names its library model by a value, how that name was found (an argparse default is said).
  if (detected.model && libraryModelMade?.kind === 'call' && (detected.model.source === 'timm' || detected.model.source === 'torchvision')) {
    const nameHow = libraryNameHow(libraryModelMade, calls, bindings);
    if (nameHow) detected.model = { ...detected.model, nameHow };
  }
  // A hub model whose block list the script cut down (`model.model.layers = model.model.layers[:12]`): the blocks kept.
  if (detected.model?.spec.kind === 'transformer' && hubModelCall) {
    const model = bindings.value(hubModelCall);
    const layers = keptBlockCount(detected.model.spec, bindings.program.libraryListsKept.filter((k) => k.model === model));
    if (layers !== undefined) detected.model = { ...detected.model, spec: { ...detected.model.spec, layers } };
  }
  if (detected.model?.spec.kind === 'transformer' && detected.frozen && hubModelCall) {
    const model = bindings.value(hubModelCall);
    const freezes = bindings.program.libraryFreezes.filter((f) => f.model === model);
    const share = model ? libraryFrozenShare(detected.model.spec, freezes) : undefined;
    if (share) detected.frozen = { ...detected.frozen, exact: share.fraction, ...(share.lowerLayers ? { lowerLayers: share.lowerLayers } : {}) };
    // Frozen whole, while the optimizers train only modules of the script outside it (a projector feeding it): the
    // trained parameters are theirs, counted in the model's units.
    const last = freezes.at(-1);
    const updated = modulesUpdated(optimizersStepping(calls, optimizersMade, bindings));
    const outside = updated.filter((module) => module.kind === 'layer' || (module.kind === 'object' && module.role === 'instance'));
    const trained = outside.reduce((sum, module) => sum + moduleParameters(module), 0);
    const total = specParameters(detected.model.spec);
    if (!share && last?.path === '' && last.frozen && outside.length === updated.length && trained > 0 && trained < total) {
      detected.frozen = { ...detected.frozen, exact: 1 - trained / total };
    }
  }
  if (detected.model) detected.unresolved = undefined;
  else detected.unresolved ??= undeterminedTrainedModel(calls, bindings);
  // A detector's images: the height the estimate rebuilds it at (its width follows the images' aspect ratio).
  if (detected.detector && detected.model?.source === 'torchvision') {
    detected.imageSize = { value: detected.detector.value.height, line: detected.detector.line, how: detected.detector.how };
    // A detector takes a list of (C, H, W) images: the first size of one image made in the loop is its channels.
    const channels = dataBatch;
    if (channels && channels.line === detected.detector.line && [1, 3, 4].includes(channels.value)) dataBatch = undefined;
    // No loader's batch: the length of the list of images the script builds (`[torch.rand(3, H, W) for _ in range(n)]`).
    dataBatch ??= imageListLength(tree.rootNode, bindings);
  }
  const audioModel = detected.model?.spec.kind === 'transformer' ? detected.model.spec.audio : undefined;
  if (detected.model && audioModel) {
    // A waveform model reads samples: its sequence is the waveform's length (token-like lengths are the labels').
    const samples = waveformSamples(bindings.program);
    if (samples) detected.seqLen = samples;
    else if (detected.seqLen && detected.seqLen.value < 400) detected.seqLen = undefined;
    if (detected.featureEncoderFrozen !== undefined) detected.model = { ...detected.model, spec: { ...detected.model.spec, audio: { ...audioModel, frozen: true } } as TransformerSpec };
  }
  if (detected.model) {
    const trainedValues = customModel ? customModels.filter((m) => customModel.className.split(' + ').includes(m.className)).map((m) => m.value) : [];
    detected.residentCopies = residentCopies(bindings.program, detected.model, trainedValues, calls);
    const kept = keptOutputSites(bindings.program, tree.rootNode, detected.model.line);
    if (kept.length > 0) detected.keptOutputs = kept;
    detected.residentData = residentGpuData(bindings.program);
    const adjacency = sparseAdjacency(bindings.program, calls);
    if (adjacency) detected.sparseAdjacency = adjacency;
    detected.moduleBuffers = registeredBuffersOnDevice(bindings.program);
    const perceptual = lossNetwork(calls, freezeSites, optimizerArguments, bindings);
    if (perceptual) detected.lossNetwork = perceptual;
    // The forwards whose graphs the backward runs through. Those run in loops before it (a meta-learning step) take
    // their gradients over fast weights, which are no derivatives with respect to an input.
    const modelValues = new Set<Value>([...trainedValues, ...[hubValue, libraryModelMade].filter((v): v is Value => !!v)]);
    detected.forwards = forwardsAtBackward({
      program: bindings.program, root: tree.rootNode, calls, forwards, variables: modelVariables, models: modelValues,
      ...(hubValue ? { hub: hubValue } : {}), ...(detected.ensemble ? { members: detected.ensemble.value } : {}),
    });
    const graphs = detected.forwards.graphs;
    if (graphs) {
      const weightGradients = new Set(graphs.weightGradients.map((call) => call.id));
      detected.inputDerivatives = inputDerivativeOrder(calls.filter((call) => !weightGradients.has(call.id)));
      if (!detected.inputDerivatives) detected.derivativeActivation = undefined;
    }
    stepRows = detected.forwards.rows;
  }
  // A model frozen whole and run only under no_grad beside one run with grad (a self-distillation's teacher): the
  // freezing is not the trained model's, and its weights are one more model on the GPU.
  if (detected.frozen && detected.model && frozenModules.length > 0 && !detected.untrainedModel) {
    const teacher = frozenAsideModel(frozenModules, calls, bindings.program);
    // Not where the frozen module is the model the estimate is of, or one an optimizer is given.
    const optimized = (module: Value): boolean => module === libraryModelMade || [...bindings.program.assigned]
      .some(([name, values]) => values.includes(module) && optimizerArguments.some((text) => text.includes(`${name}.parameters(`) || text.includes(`${name}.named_parameters(`)));
    if (teacher && !frozenModules.some(optimized)) {
      detected.frozen = undefined;
      const parameters = teacher.sameClass ? specParameters(detected.model.spec) : teacher.library ? specParameters(teacher.library.spec) : undefined;
      if (parameters !== undefined) detected.untrainedModel = { value: { name: teacher.name, parameters }, line: teacher.line };
    }
  }
  if (libraryModelMade && detected.model?.source !== 'custom') detected.libraryWrapped = libraryInsideModule(libraryModelMade, bindings.program, detected.model?.name ?? '');
  const hubModelMade = hubModelCall && !libraryModelMade ? bindings.value(hubModelCall) : undefined;
  if (hubModelMade && detected.model?.spec.kind === 'transformer') detected.jointTower = pairedHubModel ?? visionTowerBeside(hubModelMade, bindings.program);
  // LoRA written by hand (no PEFT): a module of the script with two adapter matrices swapped into a hub model.
  if (!detected.lora && detected.model?.spec.kind === 'transformer') detected.lora = handWrittenLora(tree.rootNode, calls, bindings);
  if (detected.lora && !loraRequested) loraRequested = detected.lora.line;
  if (!detected.lora && loraRequested !== undefined) detected.lora = { value: { rank: 8, targetModules: [], dropout: 0 }, line: loraRequested };
  if (detected.usesTrainer && !detected.optimizer) detected.optimizerImpl ??= 'fused';
  if (hasGradScaler !== undefined && !detected.autocast) detected.autocast = { value: 'fp16', line: hasGradScaler };

  // Where neither the data nor a name says, the rows of the tensor the step's forward is given (made in a helper).
  detected.batchSize ??= dataBatch ?? detected.generate?.value.rows ?? firstBinding(bindings, BATCH_NAMES) ?? stepRows;
  // Image batches of several sizes in one call of the trained model (multi-crop): as many images of the largest size
  // as make the same tokens (a ViT) or pixels.
  const crops = detected.model ? cropList(calls, bindings.program) : undefined;
  if (crops && detected.model) {
    const spec = detected.model.spec;
    const patch = spec.kind === 'transformer' && spec.family === 'vit' ? spec.patchSize ?? 16 : undefined;
    const largest = crops.value.reduce((a, b) => (b.height * b.width > a.height * a.width ? b : a));
    const weight = (c: { height: number; width: number }): number => patch
      ? (Math.floor(c.height / patch) * Math.floor(c.width / patch) + 1) / (Math.floor(largest.height / patch) * Math.floor(largest.width / patch) + 1)
      : (c.height * c.width) / (largest.height * largest.width);
    const images = Math.round(crops.value.reduce((sum, c) => sum + c.batch * weight(c), 0));
    detected.cropList = { value: { crops: crops.value, images, size: largest.height, tokens: patch !== undefined }, line: crops.line };
    detected.batchSize = { value: images, line: crops.line, how: 'call-argument' };
    if (largest.height === largest.width) detected.imageSize = { value: largest.height, line: crops.line, how: 'call-argument' };
  }
  // A loader rebuilt with a larger batch, then the training function run again (a notebook's cells run a second
  // time after raising the batch size): the peak is that run's.
  const rebuilt = backwardCall ? rebuiltLoaderBatch(bindings.program, backwardCall) : undefined;
  if (rebuilt && detected.batchSize && rebuilt.value > detected.batchSize.value) {
    detected.batchRerun = { value: detected.batchSize.value, line: rebuilt.line };
    detected.batchSize = rebuilt;
  }
  // The training function run again on larger images (a notebook's later cells: the model built anew for the size,
  // a smaller batch): the peak is that run's.
  const runs = backwardCall && detected.model && (detected.model.source === 'timm' || detected.model.source === 'torchvision')
    ? imageRuns(bindings.program, backwardCall) : undefined;
  const later = runs ? largestLaterRun(runs) : undefined;
  if (later && detected.model) {
    const { first, largest } = later;
    detected.imageRerun = { value: { batch: first.batch, imageSize: first.imageSize }, line: largest.line };
    detected.batchSize = { value: largest.batch, line: largest.line, how: 'call-argument' };
    detected.imageSize = { value: largest.imageSize, line: largest.line, how: 'call-argument' };
    // A model built anew for the run (not the first run's own, whose head the script may have replaced).
    const library = largest.model && largest.model !== first.model ? libraryVisionCall(largest.model) : undefined;
    if (library && largest.model) {
      const made = largest.model;
      const keyword = (key: string): PyValue | undefined => toPy(made.kwargs.get(key));
      detected.model = visionModel(library.vision, library.name, library.source, made.line, keyword('num_classes'), keyword);
      libraryModelMade = made;
    }
  }
  if (detected.model?.spec.kind === 'transformer' && backwardCall) readSampleLengths(detected, detected.model.spec, bindings.program, backwardCall);
  if (detected.model?.spec.kind === 'transformer' && detected.model.spec.multipleChoice) {
    const read = stepChoices(bindings.program, backwardCall, forwards);
    if (read) detected.seqLen ??= read.seqLen;
    detected.choices = read?.choices ?? firstBinding(bindings, CHOICE_NAMES);
  }
  if (videoModel && detected.model === videoModel.model) {
    const clip = backwardCall ? stepClip(bindings.program, backwardCall) : undefined;
    const named = firstBinding(bindings, FRAME_NAMES);
    const frames: Located<number> = clip?.frames ?? madeClipFrames ?? named ?? { value: videoModel.video.frames };
    detected.videoFrames = { ...frames, assumed: !clip && !madeClipFrames && !named };
    if (clip) detected.imageSize ??= clip.size;
    const build = videoModel.video.build(frames.value);
    const classes = videoModel.classes;
    detected.model = { ...detected.model, spec: build(detected.imageSize?.value ?? videoModel.video.imageSize, classes), rebuildAt: (size: number) => build(size, classes),
      nativeImageSize: videoModel.video.imageSize };
  }
  detected.seqLen ??= firstBinding(bindings, SEQ_NAMES);
  detected.targetLen ??= firstBinding(bindings, TARGET_NAMES);
  // Only the labels were tokenised with a length (Whisper: the input is audio): that length is the text sequence.
  detected.seqLen ??= detected.targetLen;
  detected.imageSize ??= firstBinding(bindings, IMAGE_NAMES);
  // A convolutional or patch model's activations follow the image's area: a square of the same area stands for it.
  if (!detected.imageSize && rectangularImage && !detected.detector) {
    const { height, width } = rectangularImage.value;
    detected.imageSize = { value: Math.round(Math.sqrt(height * width)), line: rectangularImage.line, how: rectangularImage.how };
    detected.rectangularImage = rectangularImage;
  }
  if (flowModel && detected.model === flowModel.model) resolveFlowModel(detected, flowModel, bindings, calls, imageExtent(bindings.program));
  detected.accumulation ??= firstBinding(bindings, ACCUM_NAMES) ?? accumulationGuard;
  if (hasBackward !== undefined) detected.mode = { value: 'train', line: hasBackward };
  // A step made of per-sample gradients (assigned to .grad by hand for an optimizer) trains without backward().
  else if (detected.perSampleGradients && detected.optimizer) detected.mode = { value: 'train', line: detected.perSampleGradients.line };
  else if (trainerTrain !== undefined || detected.usesTrainer) detected.mode = { value: 'train', line: trainerTrain ?? detected.usesTrainer?.line };
  else if (hasNoGrad !== undefined) detected.mode = { value: 'infer-no-grad', line: hasNoGrad };
  // generate() runs under torch.no_grad() itself.
  else if (detected.generate) detected.mode = { value: 'infer-no-grad', line: detected.generate.line };
  detected.zeroGradMissing = hasBackward !== undefined && !hasZeroGrad && !detected.usesTrainer;
  // The HF Trainer's compute_loss returns the loss alone: the outputs object is gone before backward.
  if (detected.usesTrainer && hasBackward === undefined) detected.output = { value: 'dropped', line: detected.usesTrainer.line };
  return detected;
}

/** The square an optical-flow model is built for until the image pairs' size is read. */
const FLOW_ASSUMED_SIZE = 368;

/**
 * An optical-flow model built for the image pairs the step receives (their height and width, as a `__getitem__`
 * or the loop makes them) and the iterations its call asks for (`num_flow_updates=`, the most of any call; forward's
 * default where none says). Without the images' size it stays unresolved: what it keeps follows their area.
 */
function resolveFlowModel(detected: DetectedConfig, found: { flow: FlowModel; model: DetectedModel }, bindings: Bindings, calls: readonly Node[],
  extent: ImageExtent | undefined): void {
  const { flow, model } = found;
  let updates: Located<number> | undefined;
  for (const call of calls) {
    const given = callArguments(call).keywords.get('num_flow_updates');
    const value = given ? bindings.evaluate(given) : undefined;
    if (typeof value === 'number' && value >= 1 && (!updates || value > updates.value)) updates = { value, line: given!.startPosition.row, how: 'call-argument' };
  }
  const iterations = updates?.value ?? flow.defaultUpdates;
  detected.flowUpdates = { ...(updates ?? { value: iterations }), assumed: !updates };
  const height = extent?.height ?? detected.rectangularImage?.value.height ?? detected.imageSize?.value;
  const width = extent?.width ?? detected.rectangularImage?.value.width ?? detected.imageSize?.value;
  if (height === undefined || width === undefined) {
    detected.model = undefined;
    detected.unresolved = { line: model.line, reason: t('{0} has {1} parameters, but what it keeps follows the size of the images it is given, which the script does not determine',
      model.name, flow.publishedParameters.toLocaleString('en-US')) };
    return;
  }
  const spec = flow.build(height, width, iterations);
  // The pairs' area as a square (how the image size is shown), and the model rebuilt for another size at that shape.
  const square = Math.round(Math.sqrt(height * width));
  const located = extent ? { line: extent.line, how: extent.how } : { line: detected.imageSize?.line, how: detected.imageSize?.how };
  detected.imageSize = { value: square, ...located };
  if (height !== width) detected.rectangularImage = { value: { height, width }, ...located };
  detected.model = { ...model, spec, rebuildAt: (size: number) => (size === square ? spec : flow.build(size, size, iterations)), nativeImageSize: square };
}

/**
 * A Hugging Face model trained on a Dataset whose `__getitem__` returns a dict takes its fields by name: the token
 * ids' length is the sequence, the labels' the decoder's for an encoder-decoder (Whisper's input is audio: its
 * labels are its only text), the sequence otherwise.
 */
function readSampleLengths(detected: DetectedConfig, spec: TransformerSpec, program: ProgramModel, backwardCall: Node): void {
  const loop = enclosingLoops(backwardCall).find((outer) => outer.type === 'for_statement');
  const sample = loop ? sampleFields(program, loop) ?? keywordSampleFields(program, loop) : undefined;
  if (!sample) return;
  const tokens = (key: string): Located<number> | undefined => {
    const field = sample.fields.get(key);
    return field?.integer && field.shape.length === 2 ? { value: field.shape[1]!, line: sample.line, how: 'literal' } : undefined;
  };
  const labels = tokens('labels');
  detected.seqLen ??= tokens('input_ids');
  if (spec.decoderLayers > 0) detected.targetLen ??= tokens('decoder_input_ids') ?? labels;
  else detected.seqLen ??= labels;
}

/**
 * A multiple-choice model's choices per sample and their length, from the (choices, tokens) ids the step receives:
 * as its loader's dataset makes each sample (a dict by key, or the tuple elements given as `input_ids=`), else the
 * (batch, choices, tokens) ids the step's call is given as made.
 */
function stepChoices(program: ProgramModel, backwardCall: Node | undefined, forwards: readonly Node[]): { choices: Located<number>; seqLen: Located<number> } | undefined {
  const loop = backwardCall ? enclosingLoops(backwardCall).find((outer) => outer.type === 'for_statement') : undefined;
  const sample = loop ? sampleFields(program, loop) ?? keywordSampleFields(program, loop) : undefined;
  const ids = sample?.fields.get('input_ids');
  if (sample && ids?.integer && ids.shape.length === 3) {
    return { choices: { value: ids.shape[1]!, line: sample.line, how: 'literal' }, seqLen: { value: ids.shape[2]!, line: sample.line, how: 'literal' } };
  }
  for (const forward of forwards) {
    const args = callArguments(forward);
    const value = program.valueOf(args.keywords.get('input_ids') ?? args.positional[0]);
    if (value?.kind !== 'call' || !isIntegerTensor(value)) continue;
    const made = tensorShape(value);
    if (made?.dims.length !== 3) continue;
    // The choices are said where the ids are made; the length where it was given, as for (batch, tokens) ids.
    return { choices: { value: made.dims[1]!, line: value.line, how: 'literal' }, seqLen: { value: made.dims[2]!, line: made.line, how: made.how } };
  }
  return undefined;
}

/**
 * The largest batch of the DataLoaders bound, one after another, to the name of the loader the training loop
 * iterates, where the function holding the loop is called again after the rebinding (`train_dl = DataLoader(...,
 * batch_size=48)` then `run_epoch(model, train_dl, opt)` once more). The program model gives the loop the loader of
 * the first run; the later runs are found by the name.
 */
function rebuiltLoaderBatch(program: ProgramModel, backwardCall: Node): Located<number> | undefined {
  const loop = enclosingLoops(backwardCall).find((outer) => outer.type === 'for_statement');
  const { value: first } = loopLoader(program, loop);
  let fn: Node | null = loop?.parent ?? null;
  while (fn && fn.type !== 'function_definition') fn = fn.parent;
  const fnName = fn?.childForFieldName('name')?.text;
  if (first?.kind !== 'call' || !/(^|\.)DataLoader$/.test(first.path) || !fnName || !loop) return undefined;
  let root: Node = loop;
  while (root.parent) root = root.parent;
  const loaderBatch = (value: Value | undefined): number | undefined =>
    value?.kind === 'call' && /(^|\.)DataLoader$/.test(value.path) ? numberOf(value.kwargs.get('batch_size') ?? value.args[1]) : undefined;
  const assignments = treeIndex(root).assignments.filter((a) => a.childForFieldName('left')?.type === 'identifier');
  const firstAssignment = assignments.find((a) => program.valueOf(a.childForFieldName('right')) === first);
  const name = firstAssignment?.childForFieldName('left')?.text;
  if (!firstAssignment || !name) return undefined;
  const runs = treeIndex(root).calls.filter((c) => c.childForFieldName('function')?.text === fnName);
  let best: Located<number> | undefined;
  for (const later of assignments) {
    if (later.startIndex <= firstAssignment.startIndex || later.childForFieldName('left')?.text !== name) continue;
    const batch = loaderBatch(program.valueOf(later.childForFieldName('right')));
    if (batch === undefined || batch <= (best?.value ?? loaderBatch(first) ?? 0)) continue;
    if (!runs.some((run) => run.startIndex > later.endIndex)) continue;
    best = { value: batch, line: later.startPosition.row, how: 'literal' };
  }
  return best;
}

/** Names a script gives a clip's length. */
const FRAME_NAMES = ['clip_len', 'CLIP_LEN', 'clip_length', 'CLIP_LENGTH', 'num_frames', 'NUM_FRAMES', 'frames_per_clip', 'FRAMES_PER_CLIP', 'n_frames', 'N_FRAMES', 'frames', 'FRAMES'];

/**
 * The frames and size of the clips (N, C, T, H, W) a call in the step's loop gives a model, as the loader's dataset
 * makes them (`__getitem__` traced): the first call whose first argument is a sample element of five dimensions.
 */
function stepClip(program: ProgramModel, backwardCall: Node): { frames: Located<number>; size: Located<number> } | undefined {
  const loop = enclosingLoops(backwardCall).find((outer) => outer.type === 'for_statement');
  if (!loop) return undefined;
  for (const call of loop.descendantsOfType('call')) {
    const first = call?.childForFieldName('arguments')?.namedChildren.find((argument) => argument?.type !== 'keyword_argument');
    if (!call || !first) continue;
    const shape = sampleArguments(program, call, [first])?.[0]?.shape;
    if (!shape || shape.length !== 5 || ![1, 3].includes(shape[1]!)) continue;
    const line = loop.startPosition.row;
    return { frames: { value: shape[2]!, line, how: 'literal' }, size: { value: shape[3]!, line, how: 'literal' } };
  }
  return undefined;
}

/** The keywords a Hugging Face model takes its token ids by. */
const TOKEN_KEYWORDS = new Set(['input_ids', 'labels', 'decoder_input_ids']);

/**
 * A tuple sample's elements the loop passes to a model by keyword (`model(pixel_values=images, labels=labels)` in
 * `for images, labels in loader`): the fields a dict sample would give under those keys.
 */
function keywordSampleFields(program: ProgramModel, loop: Node): { fields: Map<string, SampleShape>; line: number } | undefined {
  const fields = new Map<string, SampleShape>();
  for (const argument of loop.descendantsOfType('keyword_argument')) {
    const key = argument?.childForFieldName('name')?.text;
    const value = argument?.childForFieldName('value');
    const call = argument?.parent?.parent;
    if (!key || !TOKEN_KEYWORDS.has(key) || fields.has(key) || !value || call?.type !== 'call') continue;
    // The keyword says what the tensor holds: token ids, however the dataset made them (`torch.full((T,), -100)`).
    const shape = sampleArguments(program, call, [value])?.[0];
    if (shape) fields.set(key, { ...shape, integer: true });
  }
  return fields.size > 0 ? { fields, line: loop.startPosition.row } : undefined;
}

/**
 * Whether `node` (`X.requires_grad_` or `X.requires_grad`) freezes a module the program model knows to be a deep
 * copy the script made (an EMA model), or the parameters of one.
 */
/** The `n` of an `if ... % n == 0:` around a call, in its function, where it is a number above 1. */
function everyNth(call: Node, bindings: Bindings): Located<number> | undefined {
  for (let current = call.parent; current && current.type !== 'function_definition' && current.type !== 'module'; current = current.parent) {
    if (current.type !== 'if_statement') continue;
    const condition = current.childForFieldName('condition');
    if (condition?.type !== 'comparison_operator' || condition.namedChildren[1]?.text !== '0') continue;
    const left = condition.namedChildren[0];
    const modulo = left?.type === 'parenthesized_expression' ? left.namedChildren[0] : left;
    if (modulo?.type !== 'binary_operator' || modulo.childForFieldName('operator')?.text !== '%') continue;
    const every = numberArg(modulo.childForFieldName('right') ?? undefined, bindings);
    if (every && every.value > 1) return every;
  }
  return undefined;
}

/** Whether a call sits in a method of one of the script's nn.Module classes (its `__init__` building a submodule). */
/** A library vision model (the value a call built) of which a module of the script holds parts. */
function heldInParts(value: Value | undefined, program: ProgramModel): boolean {
  return value?.kind === 'call' && libraryVisionCall(value) !== undefined && scriptModuleHoldsPartsOf(program, value);
}

/**
 * An ensemble of the script's modules stacked by torch.func (`params, buffers = stack_module_state(models)`), whose
 * stacked parameters are trained through `vmap(functional_call(...))`: its members and the line.
 */
function stackedEnsemble(calls: readonly Node[], bindings: Bindings): { members: Value[]; line: number } | undefined {
  for (const call of calls) {
    if (!/(^|\.)stack_module_state$/.test(callee(call))) continue;
    const given = callArguments(call).positional[0];
    const members = given ? bindings.value(given) : undefined;
    if (members?.kind !== 'list' || members.items.length < 2 || !members.items.every(isModuleValue)) continue;
    return { members: members.items, line: call.startPosition.row };
  }
  return undefined;
}

/**
 * The batch one member of a stacked ensemble sees: the second axis of a tensor the step makes and gives the vmapped
 * forward, whose first axis is the members (`x = torch.randn(MEMBERS, BATCH, 40)`; `run_all(params, buffers, x)`).
 */
function ensembleMemberBatch(forwards: readonly Node[], bindings: Bindings, members: number): Located<number> | undefined {
  for (const call of forwards) {
    if (underNoGrad(call)) continue;
    for (const argument of callArguments(call).positional) {
      const value = bindings.value(argument);
      const shape = value?.kind === 'call' ? tensorShape(value) : undefined;
      if (!shape || shape.dims.length < 2 || shape.dims[0] !== members) continue;
      return { value: shape.dims[1]!, ...(shape.dimOrigins?.[1] ?? { line: shape.line, how: shape.how }) };
    }
  }
  return undefined;
}

/** The names the script binds functions made by vmap to (`ensemble_forward = vmap(fmodel, randomness="different")`). */
function vmappedNames(calls: readonly Node[]): string[] {
  return calls.filter((call) => VMAP.test(callee(call))).map(assignedName).filter((name): name is string => name !== undefined);
}

/** Where the first size a tensor factory is given comes from (`torch.randint(3, V, (n, length))`: n's origin). */
function firstSizeOrigin(made: CallResultValue): { line: number; how: How } | undefined {
  const sizes = made.kwargs.get('size') ?? made.args.find((arg) => arg.kind === 'list');
  const first = sizes?.kind === 'list' ? sizes.items[0] : undefined;
  return first && 'origin' in first && first.origin ? { line: first.origin.line, how: first.origin.how } : undefined;
}

/**
 * `checkpoint(fn, ...)` outside the script's modules around a plain function that calls no module (a loss computed
 * in chunks of tokens, each chunk's logits recomputed in backward): only that function is recomputed, and the
 * model's blocks keep everything they keep.
 */
function checkpointsTensorFunction(call: Node, checkpointed: Node | undefined, bindings: Bindings): boolean {
  // Inside a module's forward, a checkpointed function stands for the module's own blocks.
  if (!checkpointed || insideModuleClass(call, bindings)) return false;
  const fn = bindings.value(checkpointed);
  if (fn?.kind !== 'function' || fn.self || fn.owner) return false;
  const body = fn.node.childForFieldName('body');
  if (!body) return false;
  // Every call in it must be known not to run a module: a library function or a tensor's method, not a module of
  // the script (or a name the program model could not resolve).
  return body.descendantsOfType('call').every((inner) => {
    const called = bindings.value(inner?.childForFieldName('function'));
    return called !== undefined && (called.kind === 'ref' || (called.kind === 'method' && !isModuleValue(called.receiver)));
  });
}

/**
 * The elements of the logits a checkpointed loss chunk makes: `F.linear(rows, weight)` in the checkpointed function,
 * the weight a layer's (a Linear's out_features or an Embedding's rows: a vocabulary), the rows the `.split(n)` of
 * the loop around the checkpoint call gives. Undefined where either is not known.
 */
function checkpointedLogitElements(call: Node, pos: readonly Node[], bindings: Bindings): number | undefined {
  const fn = bindings.value(pos[0]);
  const body = fn?.kind === 'function' ? fn.node.childForFieldName('body') : undefined;
  let vocabulary: number | undefined;
  for (const inner of body?.descendantsOfType('call') ?? []) {
    const called = bindings.value(inner?.childForFieldName('function'));
    if (!inner || called?.kind !== 'ref' || !/^torch\.nn\.functional\.linear$/.test(called.path)) continue;
    const weight = bindings.value(callArguments(inner).positional[1] ?? callArguments(inner).keywords.get('weight'));
    const layer = weight?.kind === 'method' && weight.name === 'weight' && weight.receiver.kind === 'layer' ? weight.receiver : undefined;
    const rows = layer?.type === 'Linear' ? numberOf(layer.kwargs.get('out_features') ?? layer.args[1] ?? NONE)
      : layer?.type === 'Embedding' ? numberOf(layer.kwargs.get('num_embeddings') ?? layer.args[0] ?? NONE) : undefined;
    if (rows !== undefined) vocabulary = Math.max(vocabulary ?? 0, rows);
  }
  // The loop the chunks come from: `for part, labels in zip(h.split(rows), ...)`.
  let loop: Node | null = call.parent;
  while (loop && loop.type !== 'for_statement') loop = loop.parent;
  const split = loop?.childForFieldName('right')?.descendantsOfType('call')
    .find((inner) => inner?.childForFieldName('function')?.type === 'attribute' && inner.childForFieldName('function')?.childForFieldName('attribute')?.text === 'split');
  const size = split ? callArguments(split).positional[0] ?? callArguments(split).keywords.get('split_size_or_sections') : undefined;
  const rows = size ? numberOf(bindings.value(size) ?? NONE) : undefined;
  return vocabulary !== undefined && rows !== undefined && rows > 0 ? rows * vocabulary : undefined;
}

/**
 * Whether a freezing sits in a method of a module class none of whose instances the trained models hold (a loss
 * module's `__init__` freezing the network it compares features with), where the script makes such instances.
 */
function freezesOutside(site: Node, trainedValues: readonly Value[], bindings: Bindings): boolean {
  let definition = site.parent;
  while (definition && definition.type !== 'class_definition') definition = definition.parent;
  const cls = definition ? bindings.value(definition.childForFieldName('name')) : undefined;
  if (cls?.kind !== 'class' || !isModuleClass(cls)) return false;
  const instances = bindings.program.instances.filter((instance) => instance.cls === cls);
  return instances.length > 0 && !instances.some((instance) => trainedValues.some((trained) => holdsModule(trained, instance)));
}

/** Methods that return the module they are called on (`.eval()`, `.to(device)`). */
const RETURNS_MODULE = /^(eval|train|to|cuda|requires_grad_)$/;

/**
 * A torchvision VGG's `features` (`vgg19(weights=None).features[:36].eval()`) assigned to a name the script freezes
 * and calls outside no_grad, from a module the step calls outside no_grad, where no optimizer is given its parameters:
 * a perceptual loss's feature network, whose backward reaches the trained model's output through it.
 */
function lossNetwork(calls: readonly Node[], freezeSites: readonly Node[], optimizerArguments: readonly string[], bindings: Bindings):
  Located<{ name: string; count?: number }> | undefined {
  for (const call of calls) {
    const made = bindings.value(call);
    const found = made?.kind === 'call' ? libraryVisionCall(made) : undefined;
    const features = call.parent;
    if (found?.source !== 'torchvision' || features?.type !== 'attribute' || features.childForFieldName('attribute')?.text !== 'features') continue;
    let node: Node = features;
    let count: number | undefined;
    // `[:n]`: the first n modules (a slice with a start or a step is not read).
    if (node.parent?.type === 'subscript' && node.parent.childForFieldName('value')?.id === node.id) {
      const slice = node.parent.childForFieldName('subscript');
      const stop = slice?.type === 'slice' && slice.text.startsWith(':') && slice.namedChildren.length === 1 ? bindings.evaluate(slice.namedChildren[0] ?? undefined) : undefined;
      if (typeof stop !== 'number') continue;
      count = stop;
      node = node.parent;
    }
    while (node.parent?.type === 'attribute' && RETURNS_MODULE.test(node.parent.childForFieldName('attribute')?.text ?? '') && node.parent.parent?.type === 'call') node = node.parent.parent;
    const assignment = node.parent;
    const target = assignment?.type === 'assignment' && assignment.childForFieldName('right')?.id === node.id ? assignment.childForFieldName('left')?.text : undefined;
    if (!target) continue;
    // Frozen where it is built (`.requires_grad_(False)` in the chain), by name, or over its parameters in a loop.
    const frozen = freezeSites.some((site) => {
      if (site.startIndex <= call.startIndex && site.endIndex >= node.endIndex) return true;
      if (site.text.startsWith(`${target}.`)) return true;
      let loop = site.parent;
      while (loop && loop.type !== 'for_statement') loop = loop.parent;
      return loop?.childForFieldName('right')?.text === `${target}.parameters()`;
    });
    if (!frozen) continue;
    // Called outside no_grad; held by a module (`self.features`), that module is called so by the script too.
    const withGrad = (fn: (name: string) => boolean): boolean => calls.some((c) => fn(c.childForFieldName('function')?.text ?? '') && !underNoGrad(c));
    if (!withGrad((name) => name === target)) continue;
    // Not where an optimizer is given its parameters (`loss_fn.net.parameters()`) or its holder's.
    const named = [target];
    if (target.startsWith('self.')) {
      let definition = assignment!.parent;
      while (definition && definition.type !== 'class_definition') definition = definition.parent;
      const cls = definition ? bindings.value(definition.childForFieldName('name')) : undefined;
      const holders = new Set([...bindings.program.assigned].filter(([, values]) => values.some((v) => v.kind === 'object' && v.cls !== undefined && v.cls === cls)).map(([name]) => name));
      if (cls?.kind !== 'class' || holders.size === 0 || !withGrad((name) => holders.has(name))) continue;
      named.push(...[...holders].flatMap((holder) => [holder, `${holder}.${target.slice('self.'.length)}`]));
    }
    if (optimizerArguments.some((text) => named.some((name) => text.includes(`${name}.parameters(`)))) continue;
    return { value: { name: found.name, ...(count !== undefined ? { count } : {}) }, line: call.startPosition.row };
  }
  return undefined;
}

function insideModuleClass(call: Node, bindings: Bindings): boolean {
  for (let current = call.parent; current; current = current.parent) {
    if (current.type !== 'class_definition') continue;
    const cls = bindings.value(current.childForFieldName('name'));
    return cls?.kind === 'class' && isModuleClass(cls);
  }
  return false;
}

/**
 * Where no model was found but the script hands an optimizer the parameters of a value it does not determine (a model
 * built through a registry from a config file the estimator cannot read): that model, said, rather than no model.
 */
function undeterminedTrainedModel(calls: readonly Node[], bindings: Bindings): DetectedConfig['unresolved'] {
  for (const call of calls) {
    const fn = call.childForFieldName('function');
    if (fn?.type !== 'attribute' || fn.childForFieldName('attribute')?.text !== 'parameters' || call.parent?.type !== 'argument_list') continue;
    const receiver = fn.childForFieldName('object');
    const value = bindings.value(receiver);
    if (!receiver || (value !== undefined && value.kind !== 'unknown') || !bindings.program.ranByScript(call)) continue;
    const line = call.startPosition.row;
    return { line, reason: t('the model whose parameters the optimizer gets ({0}, line {1}) is built from values the script does not determine', receiver.text, line + 1) };
  }
  return undefined;
}

/**
 * The function and parameter that name the library model a call builds (the callee, `getattr(models, arch)`, or its
 * first argument mentions the parameter), where that function ran only with its defaults, never from the script's run.
 */
function parameterDefaultNaming(call: Node, bindings: Bindings): { function: string; parameter: string } | undefined {
  let fn = call.parent;
  while (fn && fn.type !== 'function_definition') fn = fn.parent;
  if (!fn || bindings.program.ranByScript(call)) return undefined;
  const parameters = new Set<string>();
  for (const parameter of fn.childForFieldName('parameters')?.namedChildren ?? []) {
    const nameNode = parameter?.type === 'identifier' ? parameter : parameter?.childForFieldName('name') ?? parameter?.namedChildren[0];
    if (nameNode?.type === 'identifier' && nameNode.text !== 'self') parameters.add(nameNode.text);
  }
  const naming = [call.childForFieldName('function'), callArguments(call).positional[0], callArguments(call).keywords.get('model_name'), callArguments(call).keywords.get('name')];
  for (const node of naming) {
    const found = node ? identifierIn(node, parameters, 0) : undefined;
    if (found) return { function: fn.childForFieldName('name')?.text ?? '', parameter: found };
  }
  return undefined;
}

function identifierIn(node: Node, names: ReadonlySet<string>, depth: number): string | undefined {
  if (node.type === 'identifier') return names.has(node.text) ? node.text : undefined;
  if (depth > 8) return undefined;
  for (const child of node.namedChildren) {
    // `module.arch` names the attribute, not the parameter `arch`.
    if (!child || (node.type === 'attribute' && child === node.childForFieldName('attribute'))) continue;
    const found = identifierIn(child, names, depth + 1);
    if (found) return found;
  }
  return undefined;
}

/** The module a freezing call or assignment acts on (`p.requires_grad_(False)` over `teacher.parameters()`: the teacher). */
function moduleFrozenBy(node: Node | null, bindings: Bindings): Value {
  const receiver = node?.type === 'attribute' ? bindings.value(node.childForFieldName('object') ?? undefined) : undefined;
  return (receiver?.kind === 'object' && receiver.role === 'parameters' ? receiver.attrs.get('module') : receiver) ?? UNKNOWN_VALUE;
}

/**
 * Library models trained in sequence: each held by one optimizer alone, whose `step()` calls sit in loops none of
 * the other optimizers steps in. In the order their loops run (by position in the source, the calling order of
 * functions defined in turn); undefined where any two share a loop (trained together: a GAN, mutual learning).
 */
function sequentialPhases(models: readonly Value[], optimizers: readonly Value[], calls: readonly Node[], bindings: Bindings):
  Array<{ model: Value; optimizer: Value; loop: number }> | undefined {
  const phases: Array<{ model: Value; optimizer: Value; loop: number }> = [];
  const loopsOf = new Map<Value, Set<number>>();
  for (const call of calls) {
    const fn = call.childForFieldName('function');
    if (fn?.type !== 'attribute' || fn.childForFieldName('attribute')?.text !== 'step') continue;
    const optimizer = bindings.value(fn.childForFieldName('object') ?? undefined);
    if (!optimizer || !optimizers.includes(optimizer)) continue;
    const loops = enclosingLoops(call);
    if (loops.length === 0) return undefined;
    const ids = loopsOf.get(optimizer) ?? new Set<number>();
    for (const loop of loops) ids.add(loop.id);
    loopsOf.set(optimizer, ids);
    if (!phases.some((phase) => phase.optimizer === optimizer)) {
      const held = modulesUpdated([optimizer]);
      if (held.length !== 1 || !models.includes(held[0]!)) return undefined;
      phases.push({ model: held[0]!, optimizer, loop: loops[0]!.startIndex });
    }
  }
  if (phases.length < 2 || new Set(phases.map((phase) => phase.model)).size !== phases.length) return undefined;
  const seen = new Set<number>();
  for (const ids of loopsOf.values()) for (const id of ids) {
    if (seen.has(id)) return undefined;
    seen.add(id);
  }
  return phases.sort((a, b) => a.loop - b.loop);
}

/** The name a library model call builds (`torchvision.models.shufflenet_v2_x1_0`, `timm.create_model("...")`), sized or not. */
function libraryModelName(made: CallResultValue): string | undefined {
  const first = made.kwargs.get('model_name') ?? made.kwargs.get('name') ?? made.args[0];
  const named = made.path === 'timm.create_model' || TORCHVISION_GET_MODEL.test(made.path) ? toPy(first) : TORCHVISION_MODEL.exec(made.path)?.[1];
  return typeof named === 'string' ? named : undefined;
}

/** The library model calls (torchvision, timm) whose parameters the optimizers hold (`SGD(student.parameters())`). */
function libraryModelsUpdated(optimizers: readonly Value[]): Value[] {
  return modulesUpdated(optimizers).filter((module) => module.kind === 'call');
}

/** The modules (or library models) whose `parameters()` the optimizers the program model made are given. */
function modulesUpdated(optimizers: readonly Value[]): Value[] {
  const found = new Set<Value>();
  const visit = (value: Value | undefined, depth: number): void => {
    if (!value || depth > 4) return;
    if (value.kind === 'object' && value.role === 'parameters') {
      const module = value.attrs.get('module');
      if (module) found.add(module);
    } else if (value.kind === 'list') for (const item of value.items) visit(item, depth + 1);
    else if (value.kind === 'dict') visit(value.entries.get('params'), depth + 1);
  };
  for (const optimizer of optimizers) if (optimizer.kind === 'call') visit(optimizer.args[0] ?? optimizer.kwargs.get('params'), 0);
  return [...found];
}

/**
 * The (s, y) pairs LBFGS holds at most when the script's steps end: one for each iteration after its first, max_iter
 * iterations a step, so a run of fewer iterations than history_size never fills the history. Undefined where the
 * steps are not counted: a step outside `for ... in range(n)` loops of known length, or in a function called in a loop.
 */
function lbfgsPairsKept(lbfgs: { history: number; maxIter: number }, stepCalls: readonly Node[], calls: readonly Node[], bindings: Bindings): number | undefined {
  if (stepCalls.length !== 1) return undefined;
  const step = stepCalls[0]!;
  let steps = 1;
  for (const loop of enclosingLoops(step)) {
    const iterable = loop.type === 'for_statement' ? loop.childForFieldName('right') : undefined;
    const args = iterable?.type === 'call' && iterable.childForFieldName('function')?.text === 'range'
      ? iterable.childForFieldName('arguments')?.namedChildren.filter((a): a is Node => !!a) ?? [] : [];
    const bounds = args.map((arg) => numberArg(arg, bindings)?.value);
    if (args.length === 0 || args.length > 2 || bounds.some((b) => b === undefined || !Number.isInteger(b))) return undefined;
    steps *= args.length === 1 ? bounds[0]! : Math.max(0, bounds[1]! - bounds[0]!);
  }
  // A function holding the step, called from a loop, steps more often than its own loops say.
  const scope = enclosingScope(step);
  const name = scope?.type === 'function_definition' ? scope.childForFieldName('name')?.text : undefined;
  if (name && calls.some((call) => call.childForFieldName('function')?.text === name && enclosingLoops(call).length > 0)) return undefined;
  return Math.min(lbfgs.history, Math.max(0, steps * lbfgs.maxIter - 1));
}

/** The submodule a library model's call is read through at once (`vgg19(weights=None).features`), by its path. */
function partReadAtCall(calls: readonly Node[], bindings: Bindings, made: Value): string | undefined {
  const call = calls.find((c) => bindings.value(c) === made);
  const read = call?.parent;
  if (!call || read?.type !== 'attribute' || read.childForFieldName('object')?.id !== call.id) return undefined;
  return read.childForFieldName('attribute')?.text;
}

/** A library model cut to the parts a submodule path names, where they are its first parts (`features`). */
function withPartsRead(model: DetectedModel, path: string): DetectedModel | undefined {
  const spec = model.spec;
  const covered = spec.kind === 'layers' ? partsNamed(spec.parts ?? [], path) : undefined;
  // Nothing may run before them (an unnamed start of the net without layers aside).
  const first = spec.kind === 'layers' && covered ? spec.parts![covered[0]!] : undefined;
  if (spec.kind !== 'layers' || !covered || !first || first.parametersBefore > 0 || first.savedBefore > 0 || covered[covered.length - 1]! + 1 >= spec.parts!.length) return undefined;
  const end = covered[covered.length - 1]! + 1;
  const rebuild = model.rebuildAt;
  return {
    ...model, name: `${model.name}.${path}`, spec: withPartsBefore(spec, end),
    ...(rebuild ? { rebuildAt: (size: number, batch?: number) => withPartsBefore(rebuild(size, batch), end) } : {}),
  };
}

/** A library vision model of transformer kind (ViT, DeiT, BEiT) held as a submodule of the trained custom model. */
function libraryTransformerHeld(models: ReadonlyArray<CustomModuleInfo & { value: Value }>, trained: CustomModuleInfo): { model: DetectedModel; made: Value } | undefined {
  for (const entry of models) {
    if (!trained.className.split(' + ').includes(entry.className) || entry.value.kind !== 'object') continue;
    for (const held of entry.value.attrs.values()) {
      const model = held.kind === 'call' ? libraryVisionModel(held) : undefined;
      if (model?.spec.kind === 'transformer') return { model, made: held };
    }
  }
  return undefined;
}

/** The timm / torchvision model a library call the program model made builds, with the arguments it ran with. */
/**
 * How the name of a library model was found where the script gives it as a value: timm's model_name, get_model's
 * name, or the name `getattr(models, name)` / `vars(models)[name]` looks up (an argparse default, a config entry, an
 * argument list the script hands parse_args). Undefined where the script calls the builder by its own name.
 */
function libraryNameHow(made: CallResultValue, calls: readonly Node[], bindings: Bindings): How | undefined {
  const given = made.path === 'timm.create_model' ? made.kwargs.get('model_name') ?? made.args[0]
    : TORCHVISION_GET_MODEL.test(made.path) ? made.kwargs.get('name') ?? made.args[0] : undefined;
  if (given) return given.kind === 'string' ? given.origin?.how ?? 'literal' : undefined;
  // The call that made it (a method chained on it, `.cuda()`, holds the same value on the same line).
  for (const call of calls) {
    if (call.startPosition.row !== made.line || bindings.value(call) !== made) continue;
    const callee = call.childForFieldName('function');
    const named = callee?.type === 'call' && callee.childForFieldName('function')?.text === 'getattr'
      ? callee.childForFieldName('arguments')?.namedChildren[1]
      : callee?.type === 'subscript' ? callee.childForFieldName('subscript') : undefined;
    if (named && bindings.evaluate(named) !== undefined) return bindings.howOf(named);
  }
  return undefined;
}

/** A torchvision video classifier call (`torchvision.models.video.s3d(...)`) and its catalog entry. */
function libraryVideoCall(made: CallResultValue): { name: string; video: VideoModel } | undefined {
  const name = /^torchvision\.models\.video\.([a-z0-9_]+)$/.exec(made.path)?.[1];
  const video = name ? findVideoModel(name) : undefined;
  return video ? { name: name!, video } : undefined;
}

/** A video model at the catalog's clip length and size until the step's clips are read (see videoFrames); 400 classes unless told. */
function videoDetectedModel(video: VideoModel, name: string, line: number, classes: PyValue | undefined): { video: VideoModel; classes: number; model: DetectedModel } {
  const numClasses = typeof classes === 'number' ? classes : 400;
  const build = video.build(video.frames);
  const model: DetectedModel = { name, source: 'torchvision', line, spec: build(video.imageSize, numClasses),
    rebuildAt: (size: number) => build(size, numClasses), defaultWeightDtype: 'fp32' };
  return { video, classes: numClasses, model };
}

function libraryVisionModel(made: Value): DetectedModel | undefined {
  const found = made.kind === 'call' ? libraryVisionCall(made) : undefined;
  if (!found || made.kind !== 'call') return undefined;
  const keyword = (key: string): PyValue | undefined => toPy(made.kwargs.get(key));
  return visionModel(found.vision, found.name, found.source, made.line, keyword('num_classes'), found.source === 'torchvision' ? keyword : undefined);
}

/**
 * A torchvision / timm classifier as the script fine-tunes it: a new head in place of its own (its classes), and the
 * submodules its requires_grad calls freeze, run in order. A frozen prefix fed by the data records nothing, so the
 * net keeps only from its first trainable part on; the frozen share is then exact, not assumed.
 */
function applyVisionFreezing(detected: DetectedConfig, made: Value, program: ProgramModel): void {
  const found = made.kind === 'call' ? libraryVisionCall(made) : undefined;
  const freezes = program.libraryFreezes.filter((f) => f.model === made);
  if (!found || made.kind !== 'call' || !detected.model || freezes.length === 0 || found.vision.segmentation) return;
  const base = detected.model;
  if (base.spec.kind !== 'layers') {
    applyVisionTransformerFreezing(detected, found.vision, freezes);
    return;
  }
  const classes = replacedHeadClasses(base.spec, freezes);
  const resnetStem = replacedResNetStem(base.spec, freezes);
  // Rebuilt with the new head's classes or stem and the builder's other keywords (`width_mult`).
  const keyword = (key: string): PyValue | undefined => toPy(made.kwargs.get(key));
  const rebuilt = classes === undefined && !resnetStem ? base
    : { ...visionModel(found.vision, base.name, base.source, base.line, classes ?? keyword('num_classes'), found.source === 'torchvision' ? keyword : undefined, { resnetStem }), nativeImageSize: base.nativeImageSize };
  if (rebuilt.spec.kind !== 'layers') return;
  const model = withHeadLayers(rebuilt, replacedHeadExtraParameters(rebuilt.spec, freezes, made));
  if (model.spec.kind !== 'layers') return;
  const freezing = visionFreezing(model.spec, freezes);
  if (!freezing || !model.rebuildAt) {
    detected.model = model;
    return;
  }
  // The script freezes parameters the program model did not follow (`named_parameters()` filtered by name): the
  // frozen share stays assumed, and said.
  if (detected.frozen && !freezes.some((f) => f.frozen)) {
    detected.model = model;
    return;
  }
  const rebuild = model.rebuildAt;
  const { trainableFrom, frozenParameters } = freezing;
  detected.model = { ...model, spec: withFrozenPrefix(model.spec, trainableFrom), rebuildAt: (size: number, batch?: number) => withFrozenPrefix(rebuild(size, batch), trainableFrom) };
  if (detected.frozen) detected.frozen = { ...detected.frozen, exact: frozenParameters / model.spec.parameters };
}

/**
 * Parameters of a new head the script put on a library vision model beyond the linear classifier the model is rebuilt
 * with (`model.fc = nn.Sequential(nn.Linear(d, d), nn.ReLU(), model.fc)`, MoCo v2's MLP head): every layer of the
 * Sequential, the model's own classifier where it is one of them, less the head the rebuilt net has. 0 for a plain
 * linear head, or where a layer of it is not one the script sizes.
 */
function replacedHeadExtraParameters(spec: LayerNetSpec, freezes: ReadonlyArray<{ path: string; replaced?: Value }>, made: CallResultValue): number {
  let extra = 0;
  for (const { path, replaced } of freezes) {
    if (!isHeadPath(path) || replaced?.kind !== 'layer' || replaced.type !== 'Sequential') continue;
    const own = partParameters(spec, path);
    if (own === undefined) continue;
    let total = 0;
    let sized = true;
    for (const child of replaced.children) {
      if (child.kind === 'layer') total += layerParameters(child).total;
      // The model's own classifier, kept as the head's last layer: as the model was built (its classes).
      else if (libraryClassifierOf(child) === made) total += libraryClassifierParameters(made) ?? NaN;
      else sized = false;
    }
    extra = sized && Number.isFinite(total) ? Math.max(0, total - own) : 0;
  }
  return extra;
}

/** The library model whose classifier a value is (`model.fc` read before it was replaced). */
function libraryClassifierOf(value: Value): Value | undefined {
  if (value.kind === 'method' && value.receiver.kind === 'call' && isHeadPath(value.name)) return value.receiver;
  return value.kind === 'object' && value.role === 'library-module' && isHeadPath(value.typeName) ? value.attrs.get('model') : undefined;
}

/** Parameters of a library vision model's linear classifier as it was built: features x classes plus a bias. */
function libraryClassifierParameters(made: CallResultValue): number | undefined {
  const found = libraryVisionCall(made);
  const classes = toPy(made.kwargs.get('num_classes')) ?? 1000;
  if (!found || typeof classes !== 'number') return undefined;
  const withHead = found.vision.build(224, classes);
  const without = found.vision.build(224, 0);
  return withHead.kind === 'layers' && without.kind === 'layers' ? withHead.parameters - without.parameters : undefined;
}

/** A library model with `extra` parameters more in its head (see replacedHeadExtraParameters), rebuilt alike. */
function withHeadLayers(model: DetectedModel, extra: number): DetectedModel {
  if (extra <= 0 || model.spec.kind !== 'layers') return model;
  const grown = (spec: LayerNetSpec): LayerNetSpec => ({ ...spec, parameters: spec.parameters + extra, castParameters: spec.castParameters + extra });
  const rebuild = model.rebuildAt;
  return { ...model, spec: grown(model.spec), ...(rebuild ? { rebuildAt: (size: number, batch?: number) => grown(rebuild(size, batch)) } : {}) };
}

/**
 * The classes of a new box predictor the script put on a detector (torchvision's fine-tuning tutorial:
 * `FastRCNNPredictor(in_features, num_classes)`), the last one assigned.
 */
function replacedPredictorClasses(freezes: ReadonlyArray<{ path: string; replaced?: Value }>): number | undefined {
  let classes: number | undefined;
  for (const { path, replaced } of freezes) {
    if (replaced?.kind !== 'call') continue;
    // SSD's fine-tuning shape: `model.head.classification_head = SSDClassificationHead(in_channels, num_anchors, n)`
    // (SSDLiteClassificationHead likewise), the same head the builder makes for n classes.
    const rcnn = path === 'roi_heads.box_predictor' && /FastRCNNPredictor$/.test(replaced.path);
    const ssd = path === 'head.classification_head' && /SSD(?:Lite)?ClassificationHead$/.test(replaced.path);
    if (!rcnn && !ssd) continue;
    const given = replaced.kwargs.get('num_classes') ?? replaced.args[rcnn ? 1 : 2];
    classes = given?.kind === 'number' && Number.isInteger(given.value) && given.value > 1 ? given.value : undefined;
  }
  return classes;
}

/**
 * A vision transformer (torchvision's ViT) frozen whole and given a new head: the embeddings and every block see
 * inputs without history and record nothing; only the head trains. Other freezing shapes are left as assumed.
 */
function applyVisionTransformerFreezing(detected: DetectedConfig, vision: VisionModel, freezes: ReadonlyArray<{ path: string; frozen: boolean; replaced?: Value }>): void {
  const base = detected.model;
  if (!base || base.spec.kind !== 'transformer') return;
  let bodyFrozen = false;
  let headTrained = true;
  let classes: number | undefined;
  for (const { path, frozen, replaced } of freezes) {
    if (path === '') [bodyFrozen, headTrained] = [frozen, !frozen];
    else if (isHeadPath(path)) {
      headTrained = !frozen;
      classes = headClasses(replaced) ?? classes;
    } else return;
  }
  const model = classes === undefined ? base : { ...visionModel(vision, base.name, base.source, base.line, classes), nativeImageSize: base.nativeImageSize };
  detected.model = model;
  const spec = model.spec;
  if (!bodyFrozen || !headTrained || spec.kind !== 'transformer' || !detected.frozen) return;
  const total = countTransformerParameters(spec).total;
  const head = spec.hidden * spec.numLabels + spec.numLabels;
  detected.frozen = { ...detected.frozen, exact: (total - head) / total, lowerLayers: spec.layers };
}

/**
 * The parameters the optimizers hold where each holds only submodules of a library vision model (its new head, a
 * named stage): `AdamW(model.fc.parameters())`. Undefined where any holds the whole model or what is not known.
 */
function parametersOptimized(optimizers: readonly Value[], model: Value, spec: LayerNetSpec): Located<number> | undefined {
  let total = 0;
  let line: number | undefined;
  const count = (value: Value | undefined, depth: number): boolean => {
    if (!value || depth > 4) return false;
    if (value.kind === 'list') return value.items.length > 0 && value.items.every((item) => count(item, depth + 1));
    if (value.kind === 'dict') return count(value.entries.get('params'), depth + 1);
    if (value.kind !== 'object' || value.role !== 'parameters') return false;
    const module = value.attrs.get('module');
    if (module?.kind === 'layer') {
      total += layerParameters(module).total;
      return true;
    }
    const parameters = module?.kind === 'object' && module.role === 'library-module' && module.attrs.get('model') === model ? partParameters(spec, module.typeName) : undefined;
    if (parameters === undefined) return false;
    total += parameters;
    return true;
  };
  for (const optimizer of optimizers) {
    if (optimizer.kind !== 'call' || !count(optimizer.args[0] ?? optimizer.kwargs.get('params'), 0)) return undefined;
    line ??= optimizer.line;
  }
  return line === undefined ? undefined : { value: total, line };
}

/**
 * The images in a list a comprehension builds, one (C, H, W) float tensor per item over `range(n)`: what a
 * detector is given as its batch. The first such list in the script.
 */
function imageListLength(root: Node, bindings: Bindings): Located<number> | undefined {
  for (const comprehension of root.descendantsOfType('list_comprehension')) {
    if (!comprehension) continue;
    const clauses = comprehension.namedChildren.filter((c): c is Node => c?.type === 'for_in_clause' || c?.type === 'if_clause');
    if (clauses.length !== 1 || clauses[0]!.type !== 'for_in_clause') continue;
    const made = bindings.program.valueOf(comprehension.childForFieldName('body'));
    const dims = made?.kind === 'call' && !isIntegerTensor(made) ? tensorShape(made)?.dims : undefined;
    if (!dims || dims.length !== 3 || ![1, 3, 4].includes(dims[0]!)) continue;
    const range = clauses[0]!.childForFieldName('right');
    if (range?.type !== 'call' || range.childForFieldName('function')?.text !== 'range') continue;
    const args = range.childForFieldName('arguments')?.namedChildren.filter((a): a is Node => !!a) ?? [];
    if (args.length === 1) return numberArg(args[0], bindings);
  }
  return undefined;
}

/** A model's parameter count. */
function specParameters(spec: DetectedModel['spec']): number {
  return spec.kind === 'layers' ? spec.parameters : countTransformerParameters(spec).total;
}

function freezesCopy(node: Node | null, bindings: Bindings): boolean {
  const receiver = node?.type === 'attribute' ? bindings.value(node.childForFieldName('object') ?? undefined) : undefined;
  const module = receiver?.kind === 'object' && receiver.role === 'parameters' ? receiver.attrs.get('module') : receiver;
  return module !== undefined && bindings.program.isCopy(module);
}

/**
 * Copies of the model the script keeps on the GPU beside it (an EMA model: `copy.deepcopy(model)`, `AveragedModel`,
 * timm's `ModelEmaV2`; a momentum key encoder a wrapper module holds), where the program model saw them moved there
 * (or made from a model already there, or held by a module moved there): their weights only, no gradients or optimizer
 * states, in units of the model's weights.
 */
function residentCopies(program: ProgramModel, model: DetectedModel, trainedValues: Value[], calls: readonly Node[]): DetectedConfig['residentCopies'] {
  const modelParameters = model.spec.kind === 'layers' ? model.spec.parameters : countTransformerParameters(model.spec).total;
  if (!(modelParameters > 0)) return undefined;
  let copies = 0;
  let line: number | undefined;
  const counted: Value[] = [];
  for (const [copy, { source, line: at }] of program.copies) {
    // Moved there itself, or with a module that holds it (MoCo's key encoder, an attribute of the model moved).
    if (!program.onDevice.has(copy) && ![...program.onDevice].some((moved) => holdsValue(moved, copy))) continue;
    // Held by the model the estimate is of: its layers are already among the model's.
    if (trainedValues.some((trained) => holdsValue(trained, copy))) continue;
    let parameters = 0;
    if (trainedValues.includes(source)) parameters = modelParameters;
    else if (isModuleValue(copy)) parameters = moduleParameters(copy);
    // A library model (`timm.create_model(...)`) copied: the model the estimate is for, made on the same line.
    else if (copy.kind === 'call' && source.kind === 'call' && source.line === model.line) parameters = modelParameters;
    if (parameters <= 0) continue;
    copies += parameters / modelParameters;
    line ??= at;
    counted.push(copy, ...(program.wrapperOf(copy) ? [program.wrapperOf(copy)!] : []));
  }
  if (copies <= 0) return undefined;
  // A copy called under no_grad, after the model's forward: its forward's live tensors come on top of what the
  // model's forward keeps. Before it (a teacher's targets made first), it holds nothing the model's forward keeps.
  const callee = (call: Node): Value | undefined => program.valueOf(call.childForFieldName('function'));
  const copyCall = calls.find((call) => { const called = callee(call); return !!called && counted.includes(called) && underNoGrad(call); });
  if (!copyCall) return { value: copies, line };
  // In the same function and the same loop (the step's): not an evaluation after the training loop, or a loop of its
  // own, that runs the copy alone.
  const scope = enclosingFunction(copyCall);
  const loop = enclosingLoops(copyCall)[0];
  const afterModel = calls.some((call) => {
    if (call.startIndex >= copyCall.startIndex || enclosingFunction(call) !== scope || underNoGrad(call)) return false;
    if (enclosingLoops(call)[0]?.id !== loop?.id) return false;
    const called = callee(call);
    return !!called && !counted.includes(called) && (isModuleValue(called) || (called.kind === 'call' && libraryVisionCall(called) !== undefined));
  });
  return { value: copies, line, ...(afterModel ? { forwardUnderNoGrad: copyCall.startPosition.row } : {}) };
}

/** The function a node sits in (its id), or the module's (-1). */
function enclosingFunction(node: Node): number {
  for (let current = node.parent; current; current = current.parent) if (current.type === 'function_definition') return current.id;
  return -1;
}

/**
 * Buffers the script's modules register (`self.register_buffer("k", torch.zeros(batch, heads, max_len, dim))`, a
 * static KV cache allocated for its full capacity) in modules on the GPU, found from the modules moved there through
 * their attributes: alive through every step at their made size. Their bytes, with the line of the largest.
 */
function registeredBuffersOnDevice(program: ProgramModel): Located<number> | undefined {
  const seen = new Set<Value>();
  const pending: Value[] = [...program.onDevice];
  let bytes = 0;
  let largest: { bytes: number; line: number } | undefined;
  while (pending.length > 0 && seen.size < MAX_MODULE_VALUES_WALKED) {
    const value = pending.pop()!;
    if (seen.has(value)) continue;
    seen.add(value);
    if (value.kind === 'object' && value.role === 'instance') {
      for (const { value: tensor, line } of program.buffers.get(value)?.values() ?? []) {
        // Made by an expression of a sized tensor as well (`F.normalize(torch.randn(dim, K), dim=0)`, `.long()`).
        const dims = tensor.kind === 'call' ? madeTensorShape(tensor) : undefined;
        if (!dims || tensor.kind !== 'call') continue;
        const size = dims.reduce((a, b) => a * b, 1) * madeTensorElementBytes(tensor);
        bytes += size;
        if (!largest || size > largest.bytes) largest = { bytes: size, line };
      }
      // Plain tensor attributes made on the GPU (`self.queue = F.normalize(torch.randn(d, K, device="cuda"))`):
      // held the same way, registered or not.
      const registered = new Set([...program.buffers.get(value)?.values() ?? []].map((buffer) => buffer.value));
      for (const tensor of value.attrs.values()) {
        if (tensor.kind !== 'call' || registered.has(tensor) || !madeOnGpu(tensor)) continue;
        const dims = madeTensorShape(tensor);
        if (!dims) continue;
        const size = dims.reduce((a, b) => a * b, 1) * madeTensorElementBytes(tensor);
        bytes += size;
        if (!largest || size > largest.bytes) largest = { bytes: size, line: tensor.line };
      }
      pending.push(...value.attrs.values());
    } else if (value.kind === 'layer') {
      pending.push(...value.children, ...(value.named?.values() ?? []));
    } else if (value.kind === 'list') {
      pending.push(...value.items);
    }
  }
  return largest ? { value: bytes, line: largest.line } : undefined;
}

/** Whether a made tensor is made on the GPU (`device=`), or is an expression of one (`F.normalize(...)`, `.long()`). */
function madeOnGpu(call: CallResultValue, depth = 0): boolean {
  const device = call.kwargs.get('device');
  if (device) return deviceNamed(device) === true;
  const of = call.receiver ?? call.args[0];
  return depth < 8 && of?.kind === 'call' && madeOnGpu(of, depth + 1);
}

/** How many values the walk over the modules on the GPU reads at most. */
const MAX_MODULE_VALUES_WALKED = 20_000;

/**
 * Tensors made on the GPU (`device=`) and held by an object of a plain class (a rollout or replay buffer, a
 * vectorised environment's state): alive through every step. Their bytes, with the line of the largest.
 */
function residentGpuData(program: ProgramModel): Located<number> | undefined {
  let bytes = 0;
  let largest: { bytes: number; line: number } | undefined;
  for (const instance of program.instances) {
    if (!instance.cls || isModuleClass(instance.cls)) continue;
    for (const value of instance.attrs.values()) {
      if (value.kind !== 'call' || deviceNamed(value.kwargs.get('device') ?? NONE) !== true) continue;
      const shape = tensorShape(value);
      if (!shape) continue;
      const size = shape.dims.reduce((a, b) => a * b, 1) * madeTensorElementBytes(value);
      bytes += size;
      if (!largest || size > largest.bytes) largest = { bytes: size, line: value.line };
    }
  }
  return largest ? { value: bytes, line: largest.line } : undefined;
}

/** Whether a call is `name(...)` for one of the model variables. */
function callsModel(call: Node, models: Set<string>): boolean {
  const fn = call.childForFieldName('function');
  return fn?.type === 'identifier' && models.has(fn.text);
}

/**
 * How the step treats the model's output: `kept` at `out = model(x)` (or `logits, loss = model(x, y)`) where the
 * name is bound in the same scope as a later `.backward()`, which keeps the output alive while backward runs;
 * `dropped` at `loss = model(...).loss` or `model(...)[0]`, where only the loss outlives forward. A call inside a
 * helper that returns only the loss says neither.
 */
function modelOutputUse(calls: readonly Node[], names: readonly string[], forwards: readonly Node[]): Located<'kept' | 'dropped'> | undefined {
  const scopeOf = (node: Node): number => enclosingScope(node).id;
  const backwardScopes = new Map<number, number>();
  calls.forEach((call, i) => {
    if (names[i] !== 'backward') return;
    const scope = scopeOf(call);
    backwardScopes.set(scope, Math.max(backwardScopes.get(scope) ?? -1, call.startIndex));
  });
  if (backwardScopes.size === 0) return undefined;
  let dropped: Located<'dropped'> | undefined;
  for (const call of forwards) {
    const parent = call.parent;
    const backwardAt = backwardScopes.get(scopeOf(call));
    if (backwardAt === undefined || backwardAt < call.startIndex) continue;
    if (parent?.type === 'assignment' && parent.childForFieldName('right')?.id === call.id) return { value: 'kept', line: call.startPosition.row };
    const takesLoss = (parent?.type === 'attribute' && parent.childForFieldName('object')?.id === call.id && parent.childForFieldName('attribute')?.text === 'loss') ||
      (parent?.type === 'subscript' && parent.childForFieldName('value')?.id === call.id);
    if (takesLoss || passedOnUnnamed(call)) dropped ??= { value: 'dropped', line: call.startPosition.row };
  }
  return dropped;
}

/**
 * Whether a field of the forward's output goes straight into another call without a name holding the output
 * (`score(model(x).logits, y)`, `loss_fn(model(x)[0].float(), y)`): the output object is gone once that call
 * returns, and with it the logits (what the call keeps for backward is counted by the loss). The whole output
 * handed to a function (`f(model(x))`) is not: the function may keep it.
 */
function passedOnUnnamed(call: Node): boolean {
  let node = call;
  for (let depth = 0; depth < 8; depth++) {
    const parent = node.parent;
    if (!parent) return false;
    if (parent.type === 'argument_list') return node.id !== call.id;
    const readFrom = (parent.type === 'attribute' && parent.childForFieldName('object')?.id === node.id) ||
      (parent.type === 'subscript' && parent.childForFieldName('value')?.id === node.id) ||
      // A method called on it (`.float()`, `.view(-1, v)`): the call node above the attribute.
      (parent.type === 'call' && parent.childForFieldName('function')?.id === node.id && node.type === 'attribute');
    if (!readFrom) return false;
    node = parent;
  }
  return false;
}

/**
 * Whether every forward of the model is read at once (`model(x).logits`, `model(x)[0]`): the output object, and the
 * KV cache it holds, is dropped as soon as the one field is taken. The line of the first such forward.
 */
function outputObjectDropped(forwards: readonly Node[]): number | undefined {
  if (forwards.length === 0) return undefined;
  const readAtOnce = (call: Node): boolean => {
    const parent = call.parent;
    return (parent?.type === 'attribute' && parent.childForFieldName('object')?.id === call.id) ||
      (parent?.type === 'subscript' && parent.childForFieldName('value')?.id === call.id);
  };
  return forwards.every(readAtOnce) ? forwards[0]!.startPosition.row : undefined;
}

/**
 * Whether every forward of the model is given its inputs without labels (no `labels=`, no `**batch` that may hold
 * them): any loss over the outputs is the script's own, computed after the name is rebound. The first such line.
 */
function forwardsWithoutLabels(forwards: readonly Node[]): number | undefined {
  if (forwards.length === 0) return undefined;
  const withoutLabels = (call: Node): boolean => {
    const args = call.childForFieldName('arguments')?.namedChildren ?? [];
    return !args.some((arg) => arg?.type === 'dictionary_splat' || (arg?.type === 'keyword_argument' && /labels/.test(arg.childForFieldName('name')?.text ?? '')));
  };
  return forwards.every(withoutLabels) ? forwards[0]!.startPosition.row : undefined;
}

/** A call that scores outputs: a loss function or criterion, a (log-)softmax, a log-likelihood. */
const SCORING_CALL = /loss|criterion|softmax|entropy|nll|kl_div|logsumexp|perplexity|log_prob/i;

/**
 * Where no forward's outputs are scored: neither the loop around each forward (or its function, outside a loop) nor
 * a function of the script that it calls makes a loss or a softmax. The line of the first forward.
 */
function outputsUnscored(forwards: readonly Node[]): number | undefined {
  if (forwards.length === 0) return undefined;
  let root = forwards[0]!;
  while (root.parent) root = root.parent;
  const definitions = new Map<string, Node>();
  for (const fn of treeIndex(root).functions) {
    const name = fn?.childForFieldName('name')?.text;
    if (fn && name) definitions.set(name, fn);
  }
  const scores = (region: Node, depth: number): boolean => region.descendantsOfType('call').some((call) => {
    const callee = call?.childForFieldName('function')?.text ?? '';
    if (SCORING_CALL.test(callee)) return true;
    const defined = definitions.get(callee.split('.').pop() ?? '');
    return depth > 0 && defined !== undefined && defined.id !== region.id && scores(defined, depth - 1);
  });
  const region = (call: Node): Node => {
    let fn = call.parent;
    while (fn && fn.type !== 'function_definition') fn = fn.parent;
    return enclosingLoops(call)[0] ?? fn ?? root;
  };
  const scored = forwards.some((call) => scores(region(call), 1));
  return scored ? undefined : forwards[0]!.startPosition.row;
}

/** What ends a value's graph: a detached tensor, or a Python number or list. */
const DETACHED = /\.(detach|item|tolist|numpy)\(\)/;

/**
 * Where the model's forward runs inside a function whose every return is detached (`return pooled.detach().cpu()`,
 * `.item()`, `.tolist()`): without no_grad its graph is freed when the function returns, before the next call
 * makes another. The line of that forward; undefined where a graph may outlive the call.
 */
function graphFreedOnReturn(forwards: readonly Node[]): number | undefined {
  if (forwards.length === 0) return undefined;
  let line: number | undefined;
  for (const call of forwards) {
    let fn: Node | null = call.parent;
    while (fn && fn.type !== 'function_definition' && fn.type !== 'module') fn = fn.parent;
    if (!fn || fn.type !== 'function_definition') return undefined;
    const returns = fn.descendantsOfType('return_statement').filter((r): r is Node => {
      if (!r) return false;
      let owner: Node | null = r.parent;
      while (owner && owner.type !== 'function_definition') owner = owner.parent;
      return owner?.id === fn!.id;
    });
    if (returns.length === 0 || !returns.every((r) => DETACHED.test(r.text))) return undefined;
    line ??= call.startPosition.row;
  }
  return line;
}

/**
 * The line of `optimizer.zero_grad()` where a loop calls it after the model's forward and before backward
 * (`out = model(x); loss = ...; opt.zero_grad(); loss.backward()`, the PyTorch tutorials' order): the gradients
 * of the previous step are still alive while forward keeps its activations.
 */
function zeroGradAfterForward(calls: readonly Node[], names: readonly string[], forwards: readonly Node[]): number | undefined {
  if (forwards.length === 0) return undefined;
  const isForward = new Set(forwards);
  // One pass over the calls (a script has a loop per training function): per innermost loop, the first forward
  // and the last backward in it; a zero_grad between them in the same loop is the one.
  const loopOf = (node: Node): Node | undefined => enclosingLoops(node)[0];
  const firstForward = new Map<number, number>();
  const lastBackward = new Map<number, number>();
  const zeros: Array<{ call: Node; loop: number }> = [];
  calls.forEach((call, i) => {
    const name = names[i];
    const forward = isForward.has(call);
    if (!forward && name !== 'backward' && name !== 'zero_grad') return;
    const loop = loopOf(call)?.id;
    if (loop === undefined) return;
    if (forward) firstForward.set(loop, Math.min(firstForward.get(loop) ?? Infinity, call.startIndex));
    if (name === 'backward') lastBackward.set(loop, Math.max(lastBackward.get(loop) ?? -1, call.startIndex));
    if (name === 'zero_grad') zeros.push({ call, loop });
  });
  for (const { call: zero, loop } of zeros) {
    const forwardBefore = (firstForward.get(loop) ?? Infinity) < zero.startIndex;
    const backwardAfter = (lastBackward.get(loop) ?? -1) > zero.startIndex;
    if (forwardBefore && backwardAfter) return zero.startPosition.row;
  }
  return undefined;
}

/**
 * Whether every loop that calls backward also calls zero_grad() after its last backward (`loss.backward();
 * opt.step(); opt.zero_grad()`), none with set_to_none=False: the last step's gradients are then freed before the
 * loop ends. A zero_grad before backward leaves the last step's gradients allocated after the loop.
 */
function gradientsFreedAfterSteps(calls: readonly Node[], names: readonly string[], bindings: Bindings): boolean {
  const lastBackward = new Map<number, number>();
  const lastZero = new Map<number, number>();
  let keptInPlace = false;
  calls.forEach((call, i) => {
    const name = names[i];
    if (name !== 'backward' && name !== 'zero_grad') return;
    const loop = enclosingLoops(call)[0]?.id;
    if (loop === undefined) return;
    if (name === 'zero_grad' && bindings.evaluate(callArguments(call).keywords.get('set_to_none')) === false) keptInPlace = true;
    const at = name === 'backward' ? lastBackward : lastZero;
    at.set(loop, Math.max(at.get(loop) ?? -1, call.startIndex));
  });
  if (keptInPlace || lastBackward.size === 0) return false;
  return [...lastBackward].every(([loop, backward]) => (lastZero.get(loop) ?? -1) > backward);
}

/** Names of a library transformer's block list (`bert.encoder.layer`, `model.layers`, `transformer.h`). */
const BLOCK_LIST = /(^|\.)(layer|layers|h|block|blocks)$/;

/**
 * The share of a library transformer's parameters that the script's requires_grad calls (run in order) leave
 * frozen, from the submodule paths they name: the whole model, its embeddings, its blocks by index. Undefined where
 * a path names a part the estimator cannot size (the share is then assumed, and said).
 */
/**
 * How many blocks a transformer keeps after the script replaced its block list by some of its own blocks; undefined
 * where it did not, or where the list is not the one block stack of a decoder-only or encoder-only model.
 */
function keptBlockCount(spec: TransformerSpec, kept: ReadonlyArray<{ path: string; kept: number[] }>): number | undefined {
  if (spec.decoderLayers > 0 || spec.vision || spec.crossEncoder) return undefined;
  const last = [...kept].reverse().find((k) => BLOCK_LIST.test(k.path));
  if (!last || last.kept.length === 0 || new Set(last.kept).size !== last.kept.length || last.kept.some((i) => i >= spec.layers)) return undefined;
  return last.kept.length;
}

function libraryFrozenShare(spec: TransformerSpec, freezes: ReadonlyArray<{ path: string; frozen: boolean }>): { fraction: number; lowerLayers?: number } | undefined {
  if (freezes.length === 0 || spec.decoderLayers > 0 || spec.vision) return undefined;
  const count = countTransformerParameters(spec);
  const h = spec.hidden;
  const tokenTable = spec.vocab * (spec.embedProjection ?? h);
  const embeddingParts: Record<string, number> = {
    word_embeddings: tokenTable, embed_tokens: tokenTable, wte: tokenTable, [INPUT_EMBEDDINGS]: tokenTable,
    position_embeddings: spec.positions === 'learned' ? spec.maxPositions * h : 0, wpe: spec.positions === 'learned' ? spec.maxPositions * h : 0,
    token_type_embeddings: spec.typeVocab * h,
  };
  const frozenLayers = new Set<number>();
  const frozenEmbeddings = new Map<string, number>();
  for (const given of freezes) {
    const { frozen } = given;
    // A table's `.weight` is the whole table.
    const path = given.path.replace(/\.weight$/, '');
    const parts = path.split('.');
    const last = parts[parts.length - 1]!;
    const apply = (set: Set<number> | Map<string, number>, key: number | string, value?: number): void => {
      if (set instanceof Set) { if (frozen) set.add(key as number); else set.delete(key as number); }
      else if (frozen) set.set(key as string, value!); else set.delete(key as string);
    };
    if (path === '') {
      // The whole model: its head too; only a later unfreeze gives parts back, which this does not size.
      if (!frozen) { frozenLayers.clear(); frozenEmbeddings.clear(); continue; }
      return undefined;
    }
    if (/^\d+$/.test(last) && BLOCK_LIST.test(parts.slice(0, -1).join('.'))) {
      const index = Number(last);
      if (index >= spec.layers) return undefined;
      apply(frozenLayers, index);
    } else if (BLOCK_LIST.test(path)) {
      for (let i = 0; i < spec.layers; i++) apply(frozenLayers, i);
    } else if (last === 'embeddings') {
      // BERT-style embeddings module: the tables and their LayerNorm.
      apply(frozenEmbeddings, 'embeddings', count.embedding + (spec.normPlacement === 'post' ? 2 * h : 0));
    } else if (last in embeddingParts) {
      apply(frozenEmbeddings, last, embeddingParts[last]!);
    } else {
      return undefined;
    }
  }
  const frozenParameters = frozenLayers.size * count.perLayer + [...frozenEmbeddings.values()].reduce((a, b) => a + b, 0);
  let lowerLayers = 0;
  // The token table frozen (the embeddings' output has no history): the blocks frozen from the first up record nothing.
  const inputsWithoutHistory = ['embeddings', 'word_embeddings', 'embed_tokens', 'wte', INPUT_EMBEDDINGS].some((part) => frozenEmbeddings.has(part));
  if (inputsWithoutHistory) while (frozenLayers.has(lowerLayers)) lowerLayers++;
  return { fraction: frozenParameters / count.total, ...(lowerLayers > 0 ? { lowerLayers } : {}) };
}

/**
 * How many times the step calls the model between the start of the loop body (or the previous backward) and a
 * backward in the same loop, outside no_grad: each call keeps its own graph until that backward runs. The count of
 * the first backward that sees more than one; undefined where every backward sees one forward.
 */
/** The name an expression starts from (`u_x` for `u_x.sum()`, `grads[0]`, `u_x[:, 0]`). */
function baseName(node: Node | undefined): string | undefined {
  let current: Node | null | undefined = node;
  while (current && current.type !== 'identifier') {
    if (current.type === 'call') current = current.childForFieldName('function');
    else if (current.type === 'attribute') current = current.childForFieldName('object');
    else if (current.type === 'subscript') current = current.childForFieldName('value');
    else if (current.type === 'parenthesized_expression') current = current.namedChildren[0];
    else return undefined;
  }
  return current?.text;
}

/**
 * A model the script freezes whole and calls only under no_grad, while another module of the script is called with
 * grad (a DINO / BYOL teacher beside its student, a target network): the name it is called by, the line of its first
 * call, and whether it is an instance of the same class as the model called with grad (then it has its size) or a
 * library model. Undefined where any frozen module is called with grad, or no other module is.
 */
function frozenAsideModel(frozen: readonly Value[], calls: readonly Node[], program: ProgramModel):
  { name: string; line: number; sameClass: boolean; library?: DetectedModel } | undefined {
  const namesOf = (value: Value): string[] => [...program.assigned].filter(([, values]) => values.includes(value)).map(([name]) => name);
  const modules = [...new Set(frozen)];
  if (modules.some((module) => module.kind === 'unknown')) return undefined;
  const frozenNames = new Set(modules.flatMap(namesOf));
  const frozenCalls = calls.filter((call) => callsModel(call, frozenNames));
  if (frozenNames.size === 0 || frozenCalls.length === 0 || !frozenCalls.every((call) => underNoGrad(call))) return undefined;
  // Another module of the script, called with grad.
  const trained = calls.find((call) => {
    const fn = call.childForFieldName('function');
    if (fn?.type !== 'identifier' || frozenNames.has(fn.text) || underNoGrad(call)) return false;
    return (program.assigned.get(fn.text) ?? []).some((value) => isModuleValue(value) && !modules.includes(value));
  });
  if (!trained) return undefined;
  const trainedValue = (program.assigned.get(trained.childForFieldName('function')!.text) ?? []).find((value) => isModuleValue(value));
  const teacher = modules[0]!;
  const sameClass = teacher.kind === 'object' && trainedValue?.kind === 'object' && teacher.cls !== undefined && teacher.cls === trainedValue.cls;
  const library = teacher.kind === 'call' ? libraryVisionModel(teacher) : undefined;
  return { name: namesOf(teacher)[0] ?? '', line: frozenCalls[0]!.startPosition.row, sameClass, ...(library ? { library } : {}) };
}

/**
 * A hub model the step runs with grad before its last backward, where the library model `tower` runs there only
 * under no_grad (`vision.forward_features(images)` in `with torch.no_grad():`).
 */
function hubModelRunWithGrad<H extends { call: Node }>(calls: readonly Node[], program: ProgramModel, tower: Value, hubs: readonly H[]): H | undefined {
  const backward = lastBackwardCall(calls);
  const loop = backward ? enclosingLoops(backward)[0] : undefined;
  if (!backward || !loop) return undefined;
  const namesOf = (value: Value | undefined): Set<string> =>
    new Set([...program.assigned].filter(([name, values]) => name !== 'self' && value !== undefined && values.includes(value)).map(([name]) => name));
  const stepCalls = (names: ReadonlySet<string>): Node[] => calls.filter((call) => call.startIndex < backward.startIndex &&
    enclosingLoops(call).some((outer) => outer.id === loop.id) && runsModel(call, names));
  const towerCalls = stepCalls(namesOf(tower));
  if (towerCalls.length === 0 || !towerCalls.every((call) => underNoGrad(call))) return undefined;
  return hubs.find((hub) => stepCalls(namesOf(program.valueOf(hub.call))).some((call) => !underNoGrad(call)));
}

/** A call that runs a model held by one of `names`: `model(x)`, or a forward method of it (`vision.forward_features(x)`). */
function runsModel(call: Node, names: ReadonlySet<string>): boolean {
  const fn = call.childForFieldName('function');
  if (fn?.type === 'identifier') return names.has(fn.text);
  const object = fn?.type === 'attribute' ? fn.childForFieldName('object') : undefined;
  return object?.type === 'identifier' && names.has(object.text) && FORWARD_METHOD.test(fn?.childForFieldName('attribute')?.text ?? '');
}

const FORWARD_METHOD = /^(forward\w*|encode\w*|get_\w*features|generate)$/;

/** Where the pieces of a hub model's `inputs_embeds` get their tokens: the loader's ids, a library ViT's patches. */
function embeddedSources(call: Node, program: ProgramModel): EmbeddedSequenceSources {
  return {
    idsLength: (node) => {
      const value = program.valueOf(node);
      const made = value?.kind === 'call' ? tensorShape(value) : undefined;
      if (made?.dims.length === 2) return made.dims[1];
      const sample = sampleArguments(program, call, [node])?.[0];
      return sample?.shape.length === 2 && sample.integer ? sample.shape[1] : undefined;
    },
    visionTokens: (made) => {
      const spec = libraryVisionModel(made)?.spec;
      if (spec?.kind !== 'transformer' || spec.family !== 'vit' || !spec.patchSize || !spec.imageSize) return undefined;
      const given = toPy(made.kwargs.get('img_size') ?? made.kwargs.get('image_size'));
      const size = typeof given === 'number' && given > 0 ? given : spec.imageSize;
      const prefix = spec.maxPositions - (spec.imageSize / spec.patchSize) ** 2;
      return { tokens: Math.floor(size / spec.patchSize) ** 2 + prefix, prefix };
    },
  };
}

/**
 * A module of the script on the GPU that holds the library model as an attribute (`MultiCropWrapper(backbone,
 * head)`) beside other submodules: the wrapper's name and line, and the attributes holding those other modules.
 */
function libraryInsideModule(library: Value, program: ProgramModel, libraryName: string): DetectedConfig['libraryWrapped'] {
  for (const wrapper of wrappersHolding(program, library)) {
    const others = [...wrapper.attrs].filter(([, value]) => value !== library && isModuleValue(value)).map(([name]) => name);
    if (others.length > 0) return { value: { wrapper: wrapper.typeName, library: libraryName, others }, line: wrapper.line };
  }
  return undefined;
}

/**
 * A detector with the sizes its GeneralizedRCNNTransform is given (`min_size=640, max_size=1066`): the images are
 * resized to them, not to the builder's 800 / 1333. A tuple of min sizes (multi-scale training) draws one each
 * step: the largest is counted. SSD's fixed square is its own.
 */
function withTransformSizes(detector: DetectionModel, minSize: PyValue | undefined, maxSize: PyValue | undefined): DetectionModel {
  if (detector.fixedSize !== undefined) return detector;
  const size = (value: PyValue | undefined): number | undefined => {
    const sizes = Array.isArray(value) ? value : [value];
    return sizes.length > 0 && sizes.every((v) => typeof v === 'number' && Number.isInteger(v) && v > 0) ? Math.max(...(sizes as number[])) : undefined;
  };
  return { ...detector, minSize: size(minSize) ?? detector.minSize, maxSize: size(maxSize) ?? detector.maxSize };
}

/** A library vision model that a module of the script on the GPU holds beside `hub` (the other tower of a two-tower model). */
function visionTowerBeside(hub: Value, program: ProgramModel): Located<DetectedModel> | undefined {
  for (const wrapper of wrappersHolding(program, hub)) {
    for (const value of wrapper.attrs.values()) {
      const tower = value !== hub ? libraryVisionModel(value) : undefined;
      if (tower) return { value: tower, line: tower.line };
    }
  }
  return undefined;
}

/**
 * The first call of a module on the GPU, with grad, given a list of image batches (N, C, H, W) of more than one size
 * (`student(views)`, two global and several local crops): each batch's size.
 */
function cropList(calls: readonly Node[], program: ProgramModel): Located<Array<{ batch: number; height: number; width: number }>> | undefined {
  for (const call of calls) {
    const fn = call.childForFieldName('function');
    if (fn?.type !== 'identifier' || underNoGrad(call)) continue;
    if (!(program.assigned.get(fn.text) ?? []).some((value) => isModuleValue(value) && program.onDevice.has(value))) continue;
    const given = program.valueOf(callArguments(call).positional[0]);
    if (given?.kind !== 'list' || given.items.length < 2) continue;
    const shapes = given.items.map((item) => (item.kind === 'call' ? tensorShape(item) : undefined));
    if (shapes.some((shape) => !shape || shape.dims.length !== 4 || ![1, 3, 4].includes(shape.dims[1]!))) continue;
    const crops = shapes.map((shape) => ({ batch: shape!.dims[0]!, height: shape!.dims[2]!, width: shape!.dims[3]! }));
    if (new Set(crops.map((c) => `${c.height}x${c.width}`)).size < 2) continue;
    return { value: crops, line: call.startPosition.row };
  }
  return undefined;
}

/** The adapter matrices of a LoRA written by hand: `self.lora_A = nn.Parameter(torch.empty(r, base.in_features))`. */
const LORA_DOWN = /^(lora_?a|lora_down|a)$/i;
const LORA_UP = /^(lora_?b|lora_up|b)$/i;
/** The linears LoRA adapts in the usual transformer families, by their module names. */
const ADAPTED_LINEAR = /^(q_proj|k_proj|v_proj|o_proj|out_proj|gate_proj|up_proj|down_proj|fc1|fc2|query|key|value|dense|c_attn|c_proj|c_fc|q_lin|k_lin|v_lin|out_lin|query_proj|key_proj|value_proj|qkv|wq|wk|wv|wo)$/;

/**
 * LoRA written by hand: a module class of the script that keeps two adapter matrices (`lora_A` of rank x in,
 * `lora_B` of out x rank, as nn.Parameters) beside the linear it wraps, swapped into a library model. The rank is the
 * down matrix's first size (a number, or the value the script passes for that argument: `r=LORA_R`), the dropout the
 * rate of its nn.Dropout, the targets the module names the script lists (`TARGETS = ("q_proj", "v_proj")`). Without a
 * rank the script determines, none.
 */
function handWrittenLora(root: Node, calls: readonly Node[], bindings: Bindings): DetectedConfig['lora'] {
  /** A size given as a number, or as an argument whose value some call of the script passes by name. */
  const passed = (node: Node | undefined): number | undefined => {
    if (!node) return undefined;
    const direct = bindings.evaluate(node);
    if (typeof direct === 'number') return direct;
    if (node.type !== 'identifier') return undefined;
    for (const call of calls) {
      const value = bindings.evaluate(callArguments(call).keywords.get(node.text));
      if (typeof value === 'number') return value;
    }
    return undefined;
  };
  for (const cls of treeIndex(root).classes) {
    if (!cls) continue;
    let down: Node | undefined;
    const downNamed: string[] = [];
    let up = false;
    let dropout: Node | undefined;
    for (const assignment of cls.descendantsOfType('assignment')) {
      const left = assignment?.childForFieldName('left');
      const right = assignment?.childForFieldName('right');
      if (left?.type !== 'attribute' || left.childForFieldName('object')?.text !== 'self' || right?.type !== 'call') continue;
      const attribute = left.childForFieldName('attribute')?.text ?? '';
      if (/(^|\.)Parameter$/.test(callee(right)) && LORA_DOWN.test(attribute)) {
        down = right;
        downNamed.push(attribute);
      }
      else if (/(^|\.)Parameter$/.test(callee(right)) && LORA_UP.test(attribute)) up = true;
      else if (/(^|\.)Dropout$/.test(callee(right))) dropout = callArguments(right).positional[0] ?? callArguments(right).keywords.get('p');
    }
    // Single-letter A / B matrices count only in a class named for what it is (`LoRALinear`, `LowRankAdapter`).
    if (!downNamed.some((name) => /lora/i.test(name)) && !/lora|low_?rank/i.test(cls.childForFieldName('name')?.text ?? '')) continue;
    // `torch.randn(r, in_f) * 0.01`: the tensor made is the scaled one's.
    let made = down ? callArguments(down).positional[0] : undefined;
    while (made?.type === 'binary_operator') made = made.childForFieldName('left') ?? undefined;
    const rank = made?.type === 'call' ? passed(callArguments(made).positional[0] ?? callArguments(made).keywords.get('size')) : undefined;
    if (!up || rank === undefined || !Number.isInteger(rank) || rank <= 0) continue;
    const className = cls.childForFieldName('name')?.text;
    const built = calls.find((call) => className !== undefined && callee(call) === className);
    // The module names the script lists or assigns the adapters to.
    const targets = new Set<string>();
    for (const list of [...root.descendantsOfType('tuple'), ...root.descendantsOfType('list')]) {
      const items = list?.namedChildren ?? [];
      const names = items.map((item) => (item ? stringValue(item) : undefined));
      if (items.length > 0 && names.every((name) => name !== undefined) && names.some((name) => ADAPTED_LINEAR.test(name!))) {
        for (const name of names) if (ADAPTED_LINEAR.test(name!)) targets.add(name!);
      }
    }
    const rate = passed(dropout);
    const parametrized = className !== undefined && registeredAsParametrization(root, calls, className);
    return { value: { rank, targetModules: [...targets], dropout: rate ?? 0, ...(parametrized ? { parametrized } : {}) }, line: (built ?? cls).startPosition.row };
  }
  return undefined;
}

/**
 * Whether the script registers instances of `className` as a weight parametrization
 * (`parametrize.register_parametrization(linear, "weight", LoRA(...))`, directly or through a name bound to one):
 * the linear's weight is then made anew from W + B @ A at every access, and the linear trains as a whole one.
 */
function registeredAsParametrization(root: Node, calls: readonly Node[], className: string): boolean {
  const made = new RegExp(`^${className}\\(`);
  const boundNames = new Set(root.descendantsOfType('assignment').filter((a) => a?.childForFieldName('left')?.type === 'identifier' &&
    made.test(a.childForFieldName('right')?.text ?? '')).map((a) => a!.childForFieldName('left')!.text));
  return calls.some((call) => {
    if (!/(^|\.)register_parametrization$/.test(callee(call))) return false;
    const given = callArguments(call).positional[2] ?? callArguments(call).keywords.get('parametrization');
    return !!given && (made.test(given.text) || (given.type === 'identifier' && boundNames.has(given.text)));
  });
}

/** torch.func transforms that differentiate a function of the parameters. */
const FUNCTIONAL_GRAD = /^(grad|grad_and_value|jacrev|jacfwd)$/;
const VMAP = /(^|\.)vmap$/;

/**
 * Per-sample gradients with torch.func: `vmap` over `grad(f)` (or grad_and_value, jacrev, jacfwd) gives every
 * parameter's gradient for each sample of the batch. Where found, and whether a loop rebinds the result's name only
 * after the next call returns (`grads = per_sample(params, x, y)` with no `del grads`): the previous step's gradients
 * are then alive while the next are computed.
 */
function perSampleGradients(calls: readonly Node[]): Located<boolean> | undefined {
  const transforms = new Set<string>();
  let found: Node | undefined;
  for (const call of calls) {
    if (!VMAP.test(callee(call))) continue;
    const first = callArguments(call).positional[0];
    if (first?.type !== 'call' || !FUNCTIONAL_GRAD.test(lastName(callee(first)))) continue;
    found ??= call;
    const target = call.parent?.type === 'assignment' ? call.parent.childForFieldName('left') : undefined;
    if (target?.type === 'identifier') transforms.add(target.text);
  }
  // Gradients with respect to the parameters need the model called over them (`functional_call(model, params, x)`);
  // a vmap'd jacrev of the model's own call differentiates its inputs (a physics-informed residual).
  if (!found || !calls.some((call) => /(^|\.)(functional_call|make_functional(_with_buffers)?)$/.test(callee(call)))) return undefined;
  // Where the step applies it: by the name bound to it, or directly (`vmap(grad(f))(params, x, y)`).
  const applied = calls.filter((call) => {
    const fn = call.childForFieldName('function');
    return (fn?.type === 'identifier' && transforms.has(fn.text)) || (fn?.type === 'call' && VMAP.test(callee(fn)));
  });
  const kept = applied.some((call) => {
    const name = call.parent?.type === 'assignment' ? call.parent.childForFieldName('left') : undefined;
    const loop = enclosingLoops(call)[0];
    if (!loop || name?.type !== 'identifier') return false;
    return !loop.descendantsOfType('delete_statement').some((statement) => statement?.text.split(/[\s,]+/).includes(name.text));
  });
  return { value: kept, line: found.startPosition.row };
}

/** An element cast to fp32 (`p.float()`, `p.to(torch.float32)`, `p.to(dtype=torch.float)`). */
const FULL_PRECISION_CAST = /\.float\(\s*\)|\.to\([^()]*torch\.float(32)?\s*\)/;

/**
 * Whether an optimizer's parameters are fp32 copies the script makes of the model's (`master = [p.detach().clone()
 * .float() for p in params]`, given by name or written in the call): the optimizer holds those copies, not the
 * parameters. An optimizer only takes parameters, so a comprehension whose elements are cast to fp32 is that copy.
 */
function optimizesFullPrecisionCopies(argument: Node | undefined, call: Node): boolean {
  let given: Node | null | undefined = argument;
  if (given?.type === 'identifier') {
    const name = given.text;
    const assignments = enclosingScope(call).descendantsOfType('assignment').filter((a): a is Node => !!a && a.endIndex <= call.startIndex &&
      a.childForFieldName('left')?.type === 'identifier' && a.childForFieldName('left')?.text === name);
    given = assignments[assignments.length - 1]?.childForFieldName('right');
  }
  if (given?.type !== 'list_comprehension' && given?.type !== 'generator_expression') return false;
  const element = given.childForFieldName('body');
  return element !== null && FULL_PRECISION_CAST.test(element.text);
}

/**
 * The name of a derivative that `name` is a part of (`u_x = grads[:, 0:1]` for grads), through a few plain
 * assignments before `at` in the same function; `name` itself where it is one or none is found.
 */
function derivedFrom(name: string | undefined, at: Node, orders: ReadonlyMap<string, number>, depth = 0): string | undefined {
  if (name === undefined || orders.has(name) || depth > 3) return name;
  const scope = enclosingScope(at);
  const assignments = scope.descendantsOfType('assignment').filter((a): a is Node => !!a && a.endIndex <= at.startIndex &&
    a.childForFieldName('left')?.type === 'identifier' && a.childForFieldName('left')?.text === name);
  const last = assignments[assignments.length - 1];
  const source = baseName(last?.childForFieldName('right') ?? undefined);
  return source === undefined ? name : derivedFrom(source, last!, orders, depth + 1);
}

/**
 * Derivatives taken with a graph of their own (`torch.autograd.grad(u, x, create_graph=True)`, a physics-informed
 * residual or a gradient penalty): the highest order, where a grad of another such grad's result (`u_xx` of `u_x`)
 * is one order more. Its backward then runs through every derivative's graph as well as the forward's.
 */
function inputDerivativeOrder(calls: readonly Node[]): (Located<number> & { call: Node }) | undefined {
  const orderOf = new Map<string, number>();
  let highest: (Located<number> & { call: Node }) | undefined;
  for (const call of calls) {
    if (!/(^|\.)autograd\.grad$/.test(callee(call))) continue;
    const args = callArguments(call);
    if (args.keywords.get('create_graph')?.text !== 'True') continue;
    const outputs = args.keywords.get('outputs') ?? args.positional[0];
    const order = 1 + (orderOf.get(derivedFrom(baseName(outputs), call, orderOf) ?? '') ?? 0);
    if (!highest || order > highest.value) highest = { value: order, line: call.startPosition.row, call };
    // What it is bound to: `u_t, u_x = grad(...)`, `u_xx = grad(...)[0]`.
    let bound: Node | null = call.parent;
    while (bound && (bound.type === 'subscript' || bound.type === 'parenthesized_expression')) bound = bound.parent;
    const left = bound?.type === 'assignment' ? bound.childForFieldName('left') : undefined;
    const names = left ? (left.type === 'identifier' ? [left] : left.descendantsOfType('identifier')) : [];
    for (const name of names) if (name) orderOf.set(name.text, Math.max(order, orderOf.get(name.text) ?? 0));
  }
  return highest;
}

/**
 * The trained model whose forward a create_graph derivative differentiates (`scores = critic(mixed)`, then
 * `grad(outputs=scores, inputs=mixed, create_graph=True)`: a gradient penalty), found through the call that made its
 * outputs, which the program model recorded as a call of that model (through a helper's parameter too). Undefined
 * where the outputs come from no single model's call.
 */
function differentiatedModel<M extends { value: Value; variable?: string }>(grad: Node, models: readonly M[], program: ProgramModel): (M & { forwards: number }) | undefined {
  const outputs = callArguments(grad).keywords.get('outputs') ?? callArguments(grad).positional[0];
  if (!outputs) return undefined;
  // The expression that made the outputs: written in the call, else the last assignment to its name before it.
  let made: Node | undefined = outputs.type === 'identifier' ? undefined : outputs;
  if (outputs.type === 'identifier') {
    let scope: Node | null = grad.parent;
    while (scope && scope.type !== 'function_definition' && scope.type !== 'module') scope = scope.parent;
    for (const assignment of scope?.descendantsOfType('assignment') ?? []) {
      if (!assignment || assignment.startIndex >= grad.startIndex || assignment.childForFieldName('left')?.text !== outputs.text) continue;
      made = assignment.childForFieldName('right') ?? undefined;
    }
  }
  if (!made) return undefined;
  const madeCalls = [made, ...made.descendantsOfType('call')].filter((node): node is Node => !!node && node.type === 'call');
  const found = models.filter((model) => (program.moduleCallNodes.get(model.value) ?? [])
    .some((node) => madeCalls.some((call) => call.startIndex === node.startIndex && call.endIndex === node.endIndex)));
  if (found.length !== 1) return undefined;
  // The model's other forwards whose graphs the same backward runs through (a critic's on the real and the fake
  // batches beside the penalised one): its calls before the first backward that follows some of them in a loop.
  const model = found[0]!;
  let forwards = 1;
  if (model.variable !== undefined) {
    const names = new Set([model.variable]);
    const calls = treeIndex(program.root).calls;
    let previous = -1;
    for (const backward of calls) {
      if (lastName(callee(backward)) !== 'backward') continue;
      const loop = enclosingLoops(backward)[0];
      const from = Math.max(previous, loop?.startIndex ?? -1);
      previous = backward.startIndex;
      if (!loop) continue;
      const before = calls.filter((call) => callsModel(call, names) && call.startIndex > from && call.startIndex < backward.startIndex &&
        enclosingLoops(call)[0]?.id === loop.id && !underNoGrad(call));
      if (before.length === 0) continue;
      // The differentiated call is one of them, or is made in a helper the step calls (one more).
      const counted = before.some((call) => madeCalls.some((made) => made.startIndex === call.startIndex));
      forwards = before.length + (counted ? 0 : 1);
      break;
    }
  }
  return { ...model, forwards };
}

/**
 * Whether a call makes an in-place activation: `inplace=True`, a True among its positional arguments
 * (`nn.ReLU(True)`, `nn.LeakyReLU(0.2, True)`), or a function ending in `_` (`F.leaky_relu_`).
 */
function inPlaceCall(call: Node): boolean {
  const args = callArguments(call);
  return args.keywords.get('inplace')?.text === 'True' || args.positional.some((arg) => arg.text === 'True') || /_$/.test(callee(call));
}

/** The names of the calls a model's own class makes (its layers and functional activations). */
function namesCalledBy(model: Value, calls: readonly Node[], calledNames: readonly string[]): string[] | undefined {
  const cls = model.kind === 'object' ? model.cls?.node : undefined;
  if (!cls) return undefined;
  return calls.flatMap((call, i) => (call.startIndex >= cls.startIndex && call.endIndex <= cls.endIndex ? [calledNames[i]!] : []));
}

/**
 * The optimizers whose step() runs in the loop of the last backward: the training step's, not an earlier stage's
 * (a pretraining loop with its own optimizer). All of them where none is found there.
 */
function optimizersStepping(calls: readonly Node[], optimizers: readonly Value[], bindings: Bindings): readonly Value[] {
  const backward = lastBackwardCall(calls);
  const loop = backward ? enclosingLoops(backward)[0] : undefined;
  if (!loop) return optimizers;
  const stepping = new Set<Value>();
  for (const call of calls) {
    const fn = call.childForFieldName('function');
    if (fn?.type !== 'attribute' || fn.childForFieldName('attribute')?.text !== 'step' || !enclosingLoops(call).some((l) => l.id === loop.id)) continue;
    const optimizer = bindings.value(fn.childForFieldName('object') ?? undefined);
    if (optimizer && optimizers.includes(optimizer)) stepping.add(optimizer);
  }
  return stepping.size > 0 ? [...stepping] : optimizers;
}

/**
 * The sequence length of the token batch a collate function builds: the last size of the first 2-D integer tensor
 * it makes with a size it is given (`torch.full((len(batch), crop_len), pad, dtype=torch.long)`); the batch size
 * may stay unknown.
 */
function collatedSequence(program: ProgramModel, collateFunctions: ReadonlySet<string>): Located<number> | undefined {
  for (const { value, inFunction } of program.tensorCalls) {
    if (!inFunction || !collateFunctions.has(inFunction)) continue;
    const shape = partialTensorShape(value);
    const seq = shape?.dims.length === 2 ? shape.dims[1] : undefined;
    if (shape?.integer && seq !== undefined && seq > 1) return { value: seq, line: shape.line, how: shape.how };
  }
  return undefined;
}

/** Custom models whose own parameters an optimizer updates; past this, further ones are not read. */
const MAX_CUSTOM_MODELS = 4;

/**
 * The custom model the step trains: the first one built, or, when optimizers update the parameters of several (a
 * GAN), all of them in the order the step last calls them.
 */

/**
 * Whether an optimizer is given `name.parameters()`, or the parameters of its submodules (`model.encoder.parameters()`
 * beside `model.decoder.parameters()`, a VQGAN's autoencoder optimizer).
 */
function updatedByOptimizer(name: string, optimizerArguments: string[]): boolean {
  return optimizerArguments.some((text) => new RegExp(`(^|[^\\w.])${name}(\\.\\w+)*\\.parameters\\(`).test(text));
}

function trainedModel<M extends CustomModuleInfo & { variable?: string }>(models: M[], updated: (model: M) => boolean, lastCalled: Map<string, number>): CustomModuleInfo | undefined {
  const trained = models.filter(updated);
  if (trained.length < 2) return trained[0] ?? models[0];
  const order = (m: { variable?: string }): number => (m.variable !== undefined ? lastCalled.get(m.variable) : undefined) ?? -1;
  return trainedTogether([...trained].sort((a, b) => order(a) - order(b)));
}

/** Whether a call sits in a lambda's body. */
function insideLambda(call: Node): boolean {
  for (let node = call.parent; node; node = node.parent) {
    if (node.type === 'lambda') return true;
    if (node.type === 'function_definition' || node.type.endsWith('_statement')) return false;
  }
  return false;
}

/** Whether a call sits in an argument of a dataset constructor (`TensorDataset(torch.randn(N, ...))`). */
/**
 * An image as stored rather than as fed: uint8 pixels, or a sample a dataset's `__getitem__` makes (its transforms,
 * where the script has them, give the size the model sees).
 */
function storedImageCall(call: Node, dtype: PyValue | undefined): boolean {
  if (dtype && typeof dtype === 'object' && 'dtype' in dtype && dtype.dtype === 'uint8') return true;
  if (/torch\.uint8\b/.test(call.text)) return true;
  for (let node = call.parent; node; node = node.parent) {
    if (node.type === 'function_definition') return node.childForFieldName('name')?.text === '__getitem__';
  }
  return false;
}

function insideDatasetCall(call: Node): boolean {
  for (let node = call.parent; node; node = node.parent) {
    if (node.type === 'call' && /Dataset$/.test(node.childForFieldName('function')?.text ?? '')) return true;
    if (node.type.endsWith('_statement') || node.type === 'function_definition') return false;
  }
  return false;
}

/** Whether a call runs once per step: inside a loop or a comprehension, or in a generator function (one with `yield`). */
function insideLoopOrGenerator(call: Node): boolean {
  for (let node = call.parent; node; node = node.parent) {
    if (node.type === 'for_statement' || node.type === 'while_statement' || node.type === 'list_comprehension' || node.type === 'generator_expression') return true;
    if (node.type === 'function_definition') return node.descendantsOfType('yield').length > 0;
  }
  return false;
}

/** A positive number a call received unpacked from a dict, with where the dict's entry came from. */
function unpackedNumber(value: Value | undefined): Located<number> | undefined {
  const number = toPy(value);
  if (typeof number !== 'number' || number <= 0 || !value || !('origin' in value) || !value.origin) return undefined;
  return { value: number, line: value.origin.line, how: value.origin.how };
}

function originLine(value: Value | undefined, fallback: number): number {
  return value && 'origin' in value && value.origin ? value.origin.line : fallback;
}

/** The plain variable a call's value is assigned to, through a method chain (`labels = tok(...).input_ids.to("cuda")`). */
function assignedName(call: Node): string | undefined {
  let node: Node = call;
  while (node.parent && (node.parent.type === 'attribute' || (node.parent.type === 'call' && node.parent.childForFieldName('function')?.id === node.id))) {
    node = node.parent;
  }
  const left = assignmentTarget(node);
  if (left?.type === 'identifier') return left.text;
  // `self.tgt = torch.randint(...)`: the attribute's name.
  return left?.type === 'attribute' ? left.childForFieldName('attribute')?.text : undefined;
}

/** Whether a call's value, through a method chain like `.cuda().train()`, is assigned to a plain variable. */
function assignedOutsideModule(call: Node, value: Value, bindings: Bindings): boolean {
  let node: Node = call;
  while (node.parent && (node.parent.type === 'attribute' || (node.parent.type === 'call' && node.parent.childForFieldName('function')?.id === node.id))) {
    node = node.parent;
  }
  const parent = node.parent;
  if (parent?.type === 'argument_list' || (parent?.type === 'keyword_argument' && parent.parent?.type === 'argument_list')) {
    // Handed straight to a call outside any class (`trainer.fit(LitModel(cfg), loader)`, `train(Net().cuda())`),
    // not to a container that makes it a layer of another module (`nn.Sequential(Block(), Block())`).
    const list = parent.type === 'argument_list' ? parent : parent.parent!;
    const callee = list.parent?.childForFieldName('function')?.text ?? '';
    for (let up: Node | null = list; up; up = up.parent) if (up.type === 'class_definition') return false;
    // Handed to another module's constructor in a builder function (`PreNorm(dim, Attention(dim))`): a layer of that
    // module. A wrapper that gives the module back (`torch.compile(Net())`) leaves it the model.
    const receiver = list.parent ? bindings.value(list.parent) : undefined;
    if (receiver && receiver !== value && isModuleValue(receiver)) return false;
    return !/(^|\.)(Sequential|ModuleList|ModuleDict|append|extend|add_module|register_module|insert|setattr)$/.test(callee);
  }
  const target = assignmentTarget(node);
  return !!target && !target.text.startsWith('self.');
}

/**
 * The target a value is assigned to: the left side of `x = value`, or the matching element of `g, d = G(), D()`
 * (an unpacking whose sides have as many elements). Undefined where the value is not assigned whole.
 */
function assignmentTarget(value: Node): Node | undefined {
  const parent = value.parent;
  if (parent?.type === 'assignment' && parent.childForFieldName('right')?.id === value.id) return parent.childForFieldName('left') ?? undefined;
  const assignment = parent?.parent;
  if (parent?.type !== 'expression_list' || assignment?.type !== 'assignment' || assignment.childForFieldName('right')?.id !== parent.id) return undefined;
  const left = assignment.childForFieldName('left');
  if (left?.type !== 'pattern_list' && left?.type !== 'tuple_pattern') return undefined;
  const values = parent.namedChildren;
  const targets = left.namedChildren;
  if (values.length !== targets.length) return undefined;
  const target = targets[values.findIndex((element) => element?.id === value.id)];
  return target ?? undefined;
}

/** `keyword`: the torchvision builder's keyword arguments (aux_loss, aux_logits, weights). */
function visionModel(vision: VisionModel, name: string, source: ModelSource, line: number, classes: PyValue | undefined,
  keyword?: (key: string) => PyValue | undefined, changed: VisionOptions = {}): DetectedModel {
  // torchvision's segmentation builders default to 21 classes (VOC) and, without weights, to no auxiliary head.
  const numClasses = typeof classes === 'number' ? classes : vision.segmentation ? 21 : (source === 'timm' ? timmTagClasses(name) : undefined) ?? 1000;
  const auxLogits = keyword?.('aux_logits');
  const weights = keyword?.('weights');
  // A ViT's dropout inside its blocks: torchvision's `dropout`, timm's `proj_drop_rate`.
  const blockDropout = keyword?.('dropout') ?? keyword?.('proj_drop_rate');
  const widthMult = keyword?.('width_mult');
  const options: VisionOptions = {
    auxLoss: keyword?.('aux_loss') === true,
    // timm's Inception v3 builds no auxiliary classifier unless asked.
    ...(typeof auxLogits === 'boolean' ? { auxLogits } : source === 'timm' ? { auxLogits: false } : {}),
    pretrained: weights !== undefined && weights !== null,
    ...(typeof blockDropout === 'number' ? { blockDropout } : {}),
    ...(typeof widthMult === 'number' && widthMult > 0 ? { widthMult } : {}),
    ...changed,
  };
  // timm's `img_size=` builds a ViT's position table for that size (a convolutional net takes any size anyway).
  const imgSize = source === 'timm' ? keyword?.('img_size') : undefined;
  const builtFor = typeof imgSize === 'number' && imgSize > 0 ? imgSize : vision.imageSize;
  const spec = vision.build(builtFor ?? 224, numClasses, options);
  return {
    name, source, line, spec, defaultWeightDtype: 'fp32', ...(builtFor ? { nativeImageSize: builtFor } : {}),
    rebuildAt: spec.kind === 'layers' ? (size: number) => vision.build(size, numClasses, options) as LayerNetSpec : undefined,
  };
}

function trainerOptimizer(optim: string): OptimizerKind {
  if (/8bit/.test(optim)) return 'adam-8bit';
  if (/adafactor/.test(optim)) return 'adafactor';
  if (/adagrad/.test(optim)) return 'adagrad';
  if (/rmsprop/.test(optim)) return 'rmsprop';
  if (/sgd/.test(optim)) return 'sgd';
  return 'adamw';
}

/** Every number of a layer net's spec is finite: a size the script does not determine makes some NaN. */
function allFinite(spec: LayerNetSpec): boolean {
  return Object.values(spec).every((value) =>
    typeof value === 'number' ? Number.isFinite(value) : Array.isArray(value) ? value.every((item) => typeof item !== 'number' || Number.isFinite(item)) : true);
}
