// The peak GPU memory of one training (or inference) step, phase by phase, the way PyTorch's caching allocator
// sees it: persistent state (weights, gradients, optimizer states), what forward keeps for backward, and the
// transients of the loss, of backward and of optimizer.step(). The peak is the largest of the phases.
import { adaptedWeightElements, countTransformerParameters, transformerActivations, type ActivationContext, type ActivationMode } from './transformer';
import { GPU_CATALOG, findGpu, type GpuModel } from './catalog/gpus';
import type { Breakdown, EstimateNumbers, GpuFit, LayerNetSpec, PeakPhase, ShardingStrategy, TrainingConfig, TransformerSpec, WeightDtype } from './types';
import { LBFGS_DEFAULT_HISTORY, MAX_BATCH_SIZE } from './types';
import { t } from '../l10n';
import { DEFAULT_DERIVATIVE_ACTIVATION, derivativeKeptRatio, HIGHEST_DERIVATIVE_ORDER } from './derivative-graphs';

/** Allocated before the first forward by cuBLAS workspaces and library init (gpu-truth: alloc_at_start). */
export const LIBRARY_WORKSPACE_BYTES = 68_157_440;
/** CUDA context and kernels outside the caching allocator, seen in nvidia-smi (gpu-truth: cuda_context_overhead_bytes_end). */
export const CUDA_CONTEXT_BYTES = 827_129_856;

const FP32 = 4;

export function dtypeBytes(dtype: WeightDtype): number {
  return dtype === 'fp32' ? 4 : 2;
}

export function activationMode(cfg: Pick<TrainingConfig, 'precision' | 'weightDtype'>): ActivationMode {
  if (cfg.weightDtype !== 'fp32') return 'half';
  if (cfg.precision === 'bf16-amp' || cfg.precision === 'fp16-amp') return 'amp';
  return 'fp32';
}

interface ParameterFigures {
  total: number;
  trainable: number;
  /** Bytes of weights, gradients and optimizer states before sharding. */
  weightBytes: number;
  gradBytes: number;
  /** Gradients the optimizer step reads: the fp32 ones of master copies, else gradBytes. */
  stepGradBytes: number;
  optimizerBytes: number;
  optimizerTempBytes: number;
  castable: number;
  /** Gradient of the output layer, allocated at the very start of backward. */
  headGradBytes: number;
  /** Weights of the model's copies kept beside it (an EMA model). */
  copyBytes: number;
}

function optimizerStatesPerParam(cfg: TrainingConfig, paramBytes: number): number {
  switch (cfg.optimizer) {
    case 'sgd': return 0;
    case 'sgd-momentum': return paramBytes;
    case 'adam':
    case 'adamw': return (cfg.optimizerStates ?? 2) * paramBytes;
    // torch.optim.RMSprop: square_avg, plus momentum_buffer (momentum > 0) and grad_avg (centered).
    case 'rmsprop': return (cfg.optimizerStates ?? 1) * paramBytes;
    // torch.optim.Adagrad: state_sum.
    case 'adagrad': return paramBytes;
    // torch.optim.Adadelta: square_avg and acc_delta.
    case 'adadelta': return 2 * paramBytes;
    // torch.optim.SparseAdam: exp_avg and exp_avg_sq, dense (zeros_like the parameter) though only looked-up rows change.
    case 'sparse-adam': return 2 * paramBytes;
    // torch.optim.LBFGS: history_size (s, y) pairs of flat parameter-sized vectors once the history is full, plus the
    // direction, prev_flat_grad and one more flat vector it keeps between steps (measured: 2 x history_size + 3).
    case 'lbfgs': return (cfg.optimizerStates ?? 2 * LBFGS_DEFAULT_HISTORY + 3) * paramBytes;
    // Adafactor keeps factored row/column second moments, a few percent of one state for transformer matrices.
    case 'adafactor': return 0.05 * paramBytes;
    // bitsandbytes 8-bit Adam: two uint8 states plus one fp32 absmax per 256-value block for each.
    case 'adam-8bit': return 2 + (2 * FP32) / 256;
  }
}

/** Parameter-sized temporaries one foreach step of the optimizer holds at once, read from torch.optim's code. */
function optimizerTemporaries(cfg: TrainingConfig): number {
  switch (cfg.optimizer) {
    // Adam/AdamW: sqrt(exp_avg_sq) as the update's denominator. RMSprop: sqrt(square_avg) (or of the centered variance).
    case 'adam':
    case 'adamw':
    case 'rmsprop': return 1;
    // Adagrad: sqrt(state_sum) and the scaled gradient it divides (or the weight-decayed gradient copy).
    case 'adagrad': return 2;
    // Adadelta: std = sqrt(square_avg + eps) and the update delta made from it.
    case 'adadelta': return 2;
    // LBFGS (never foreach): the flat gradients it gathers, the parameters' flat copy its line search restores and
    // the two-loop recursion's vectors (measured: the step peaks 7 flat vectors above the kept state and gradients;
    // test/gpu/estimator/results/step_keeps.json).
    case 'lbfgs': return 7;
    // SparseAdam works on the gradient's rows only: nothing parameter-sized.
    default: return 0;
  }
}

function optimizerTempPerParam(cfg: TrainingConfig, paramBytes: number): number {
  // LBFGS works on flat copies of all parameters at once, whatever the implementation setting.
  if (cfg.optimizer === 'lbfgs') return optimizerTemporaries(cfg) * paramBytes;
  // foreach computes the update for all parameters in parameter-sized temporaries; fused does not.
  return cfg.optimizerImpl === 'foreach' ? optimizerTemporaries(cfg) * paramBytes : 0;
}

function parameterFigures(cfg: TrainingConfig): ParameterFigures {
  const paramBytes = dtypeBytes(cfg.weightDtype);
  let total: number;
  let castable: number;
  let largest: number;
  let headParams = 0;
  let loraParams = 0;
  let frozenParams = 0;
  if (cfg.model.kind === 'transformer') {
    const count = countTransformerParameters(cfg.model, cfg.lora);
    total = count.total;
    castable = count.castable;
    largest = count.largestTensor;
    loraParams = count.lora;
    frozenParams = count.frozen;
    const s = cfg.model;
    if (s.task === 'causal-lm' || s.task === 'masked-lm' || s.task === 'seq2seq') headParams = s.vocab * s.hidden;
  } else {
    total = cfg.model.parameters;
    castable = cfg.model.castParameters;
    largest = total / 10;
  }
  let trainable = total - frozenParams;
  if (cfg.lora) trainable = loraParams;
  else if (cfg.frozenFraction !== undefined) trainable = Math.round(total * (1 - cfg.frozenFraction));
  if (cfg.mode !== 'train') trainable = 0;
  // Tensors the optimizers hold in place of the model's parameters (an optimised image): they get gradients and
  // optimizer states as parameters do.
  const tensors = cfg.mode === 'train' ? cfg.optimizedTensorElements ?? 0 : 0;
  // PEFT keeps adapter weights in fp32 even over a half-precision base.
  const trainableBytes = cfg.lora ? FP32 : paramBytes;
  // Master copies: the optimizer's parameters, and so its states and temporaries, are fp32 copies of the trainable ones.
  const optimizedBytes = cfg.masterCopies ? FP32 : trainableBytes;
  const weightBytes = total * paramBytes + loraParams * FP32;
  // Sparse embeddings get sparse gradients (the looked-up rows and their indices, counted with the batch as
  // sparseGradients): no table-sized gradient is ever made for them.
  const sparseParams = cfg.model.kind === 'layers' && !cfg.lora ? Math.min(trainable, cfg.model.sparseGradientParameters ?? 0) : 0;
  const gradBytes = (trainable - sparseParams + tensors) * trainableBytes;
  // A SparseAdam beside the optimizer holds the sparse embeddings: exp_avg and exp_avg_sq dense (zeros_like the
  // table) from its first step, and nothing parameter-sized in its step (it works on the looked-up rows).
  const sparseAdamParams = cfg.sparseAdamBeside && cfg.optimizer !== 'sparse-adam' ? sparseParams : 0;
  // States for the parameters the optimizers hold (gradients exist for every trainable one).
  const held = Math.max(0, Math.min(trainable, cfg.optimizerParameters ?? trainable) - sparseAdamParams) + tensors;
  // The master weights themselves live as long as the optimizer: counted with its states.
  const optimizerBytes = held * (optimizerStatesPerParam(cfg, optimizedBytes) + (cfg.masterCopies ? FP32 : 0)) +
    sparseAdamParams * optimizerStatesPerParam({ ...cfg, optimizer: 'sparse-adam' }, optimizedBytes);
  let optimizerTempBytes = held * optimizerTempPerParam(cfg, optimizedBytes);
  if (cfg.optimizerImpl === 'for-loop' && (cfg.optimizer === 'adam' || cfg.optimizer === 'adamw')) {
    optimizerTempBytes = 2 * Math.min(largest, held) * optimizedBytes;
  } else if (cfg.optimizerImpl === 'for-loop') {
    // One parameter at a time: its temporaries, for the largest tensor.
    optimizerTempBytes = optimizerTemporaries(cfg) * Math.min(largest, held) * optimizedBytes;
  }
  if (cfg.optimizer === 'adafactor') optimizerTempBytes = 2 * Math.min(largest, held) * optimizedBytes;
  // At the step the optimizer reads the master copies' fp32 gradients (the half ones copied in, then freed).
  const stepGradBytes = cfg.masterCopies ? (trainable - sparseParams + tensors) * FP32 : gradBytes;
  const headGradBytes = cfg.lora || cfg.frozenFraction ? 0 : headParams * trainableBytes;
  const copyBytes = (cfg.modelCopies ?? 0) * total * paramBytes;
  return { total: total + loraParams, trainable: trainable + tensors, weightBytes, gradBytes, stepGradBytes, optimizerBytes, optimizerTempBytes, castable, headGradBytes, copyBytes };
}

interface ActivationFigures {
  saved: number;
  forwardTransient: number;
  backwardTransient: number;
  /** Added at the end of backward (checkpointing recomputes a segment while gradients exist). */
  recompute: number;
  outputs: number;
  /** The outputs still alive when a loss over them runs (the logits, without a KV cache already dropped). */
  lossTimeOutputs?: number;
  lossTransient: number;
  inferenceTransient: number;
  inputs: number;
  /**
   * The sparse gradients of tables built with sparse=True (the rows looked up, an int64 index each): made at the end of
   * backward, alive through the step, and through the next forward where gradients outlive the step.
   */
  sparseGradients?: number;
  /**
   * generate(): the prompt's forward (its KV cache and that forward's transients) and the last decoding step (the
   * whole KV cache, one layer's keys and values being concatenated anew, the last position's logits and their fp32 copy).
   */
  generate?: { prefill: number; end: number };
  /**
   * Backward layer by layer (traced layer nets, not checkpointed): the activation bytes alive when each layer's
   * backward runs, and the trainable parameters whose gradients are not made yet.
   */
  backwardCurve?: Array<{ bytes: number; parametersBefore: number }>;
}

/** The gradients one layer's backward holds at once: its widest activation's and its input's. */
function layerGradients(s: TransformerSpec, tokens: number, mode: ActivationMode): number {
  return 2 * tokens * (mode === 'fp32' ? FP32 : 2) * Math.max(s.intermediate, s.hidden);
}

function transformerFigures(s: TransformerSpec, cfg: TrainingConfig, params: ParameterFigures): ActivationFigures {
  const mode = activationMode(cfg);
  const training = cfg.mode === 'train';
  const ctx: ActivationContext = {
    mode, training, attention: cfg.attention, batch: cfg.batchSize, seqLen: cfg.seqLen, targetLen: cfg.targetLen, imageSize: cfg.imageSize,
    // Frozen block by block: the frozen lower blocks keep nothing, the others keep what trained blocks keep.
    frozenBase: Boolean(cfg.lora) || (cfg.frozenLowerLayers === undefined && (cfg.frozenFraction ?? 0) > 0.5),
    loraTargets: new Set(cfg.lora?.targetModules ?? []),
    // A parametrized LoRA has no adapter module of its own: its linears read their inputs as trained ones do.
    loraDropout: cfg.lora && !cfg.lora.parametrized ? (cfg.lora.dropout ?? 0) > 0 : undefined,
    autocast: cfg.precision === 'bf16-amp' || cfg.precision === 'fp16-amp',
    frozenLowerLayers: cfg.frozenLowerLayers,
  };
  const checkpointing = cfg.checkpointing && training;
  const a = transformerActivations(s, ctx, checkpointing);
  // Each adapted linear keeps the weight its parametrization made (W + B @ A) for its input's gradient, in the
  // activations' dtype (autocast's half copy of an fp32 one).
  const parametrizedWeights = training && cfg.lora?.parametrized
    ? adaptedWeightElements(s, ctx.loraTargets) * (mode === 'fp32' ? FP32 : 2) * (checkpointing ? 1 / Math.max(1, s.layers) : 1) : 0;
  // Autocast caches a half copy of every fp32 weight a linear uses; backward keeps them until it is done.
  const weightCopies = mode === 'amp' ? params.castable * 2 : 0;
  const headCopy = mode === 'amp' && (s.task === 'causal-lm' || s.task === 'masked-lm') ? s.vocab * s.hidden * 2 : 0;
  // Images, an fp32 spectrogram (AST), an fp32 waveform of seqLen samples (Wav2Vec2), or token ids and labels.
  const inputs = s.spectrogram ? cfg.batchSize * s.spectrogram.frames * s.spectrogram.melBins * FP32
    : s.family === 'vit' || s.vision ? cfg.batchSize * 3 * cfg.imageSize ** 2 * FP32
    : s.audio ? cfg.batchSize * cfg.seqLen * FP32 : cfg.batchSize * cfg.seqLen * 8 * 2 +
      // An image-to-text encoder-decoder takes fp32 images besides the labels.
      (s.crossEncoder ? cfg.batchSize * 3 * (s.crossEncoder.imageSize ?? cfg.imageSize) ** 2 * FP32 : 0);
  const logitsFloat = a.outputs > 0 ? a.tokens * s.vocab * FP32 : 0;
  // A no-grad forward of a decoder that returns its KV cache keeps every layer's k and v in the output object (with
  // grad they are the tensors attention saves anyway); the previous batch's output holds its own until rebound.
  const kvCache = cfg.kvCache && cfg.mode === 'infer-no-grad' && s.decoderLayers === 0
    ? s.layers * 2 * a.tokens * s.kvHeads * s.headDim * (mode === 'fp32' ? FP32 : 2) : 0;
  // The logits the output object holds, when the script takes only the loss from it.
  const droppedLogits = cfg.outputKept === false && training ? a.outputs : 0;
  let generate: ActivationFigures['generate'];
  if (cfg.generateNewTokens !== undefined && cfg.mode === 'infer-no-grad') {
    const kvBytes = mode === 'fp32' ? FP32 : 2;
    // Beam search expands every input to num_beams rows before the first forward.
    const beams = cfg.generateBeams ?? 1;
    // Sampling several sequences per prompt expands the prompts the same way, without a beam search's scores.
    const expansion = beams > 1 ? beams : cfg.generateReturnSequences ?? 1;
    const rows = cfg.batchSize * expansion;
    const kvPerToken = 2 * rows * s.kvHeads * s.headDim * kvBytes;
    // The step's logits and their fp32 log-probabilities; beam search's scores and logits processors add fp32
    // copies (measured with an encoder-decoder, see below).
    const lastLogits = rows * s.vocab * (kvBytes + (beams > 1 ? ENCODER_DECODER_LOGIT_COPIES : 1) * FP32);
    if (s.decoderLayers > 0) {
      // Encoder-decoder: the encoder runs once over the batch; then every decoder layer caches the keys and values
      // of the (expanded) encoder output for cross-attention, beside its self-attention cache of the new tokens.
      // The batch's encoder output stays beside its expanded copy; the step's logits go through fp32 copies (the
      // log-probabilities, the logits processors' and the beam scores'). Measured on the H200 (BART-base shape, bf16,
      // 16 x 512 source tokens, 32 new: 183 MiB above the weights greedy, 735 MiB with 4 beams; this sum gives 179
      // and 727; test/gpu/estimator/results/step_keeps.json).
      const source = cfg.seqLen;
      const crossLayer = source * kvPerToken;
      const encoderOutput = rows * source * s.hidden * kvBytes + (expansion > 1 ? cfg.batchSize * source * s.hidden * kvBytes : 0);
      const encoderTransient = cfg.batchSize * source * (2 * s.hidden + s.intermediate) * kvBytes +
        (cfg.attention === 'eager' ? 2 * cfg.batchSize * s.heads * source * source * kvBytes : 0);
      generate = {
        prefill: encoderTransient,
        end: s.decoderLayers * crossLayer + s.decoderLayers * cfg.generateNewTokens * kvPerToken + encoderOutput +
          rows * s.vocab * (kvBytes + ENCODER_DECODER_LOGIT_COPIES * FP32),
      };
    } else {
      // The last new token is returned, never fed back: the cache holds prompt + new - 1 positions.
      const cached = cfg.seqLen + Math.max(0, cfg.generateNewTokens - 1);
      generate = {
        prefill: s.layers * cfg.seqLen * kvPerToken + a.inferenceTransient * expansion + lastLogits,
        end: (s.layers + 1) * cached * kvPerToken + lastLogits,
      };
    }
  }
  if (cfg.decodingLoopTokens !== undefined && cfg.mode === 'infer-no-grad' && s.decoderLayers === 0 && generate === undefined) {
    const kvBytes = mode === 'fp32' ? FP32 : 2;
    const kvPerToken = 2 * cfg.batchSize * s.kvHeads * s.headDim * kvBytes;
    const stepLogits = cfg.batchSize * s.vocab * kvBytes;
    // The prompt's forward ends with every layer's cache and the logits of every position (the loop reads the last);
    // the first step runs while that output is still bound, one layer's cache concatenated anew; the last step holds
    // the whole cache, one layer's twice, and its own logits.
    generate = {
      prefill: Math.max(s.layers * cfg.seqLen * kvPerToken + Math.max(a.outputs, a.inferenceTransient),
        a.outputs + (s.layers + 1) * (cfg.seqLen + 1) * kvPerToken + stepLogits),
      end: (s.layers + 1) * (cfg.seqLen + cfg.decodingLoopTokens) * kvPerToken + stepLogits,
    };
  }
  return {
    saved: a.saved - droppedLogits + (checkpointing ? headCopy : weightCopies) + parametrizedWeights,
    // The feature encoder's peak comes first in forward (Wav2Vec2), when nothing else is kept or cached.
    // Logits the step drops are still alive while the loss over them runs, at the end of forward.
    forwardTransient: Math.max(a.forwardTransient + droppedLogits + (checkpointing ? weightCopies : 0),
      (a.featurePeak ?? 0) - (a.saved - droppedLogits + (checkpointing ? headCopy : weightCopies)),
      // Every block frozen and fed without history: the forward runs as a no-grad one, with its transients.
      training && cfg.frozenLowerLayers !== undefined && cfg.frozenLowerLayers >= s.layers ? a.inferenceTransient - a.saved : 0),
    // Checkpointed, backward recomputes the last layer first, while every layer's kept input is still alive: that
    // layer's activations and its gradients come on top (measured, timm DeiT-B under fp16 autocast: the 12 kept
    // fp32 inputs, the recomputed block's fp16 activations and its backward's gradients at one moment).
    backwardTransient: checkpointing ? Math.max(a.backwardTransient, a.oneLayer + layerGradients(s, a.tokens, activationMode(cfg))) : a.backwardTransient,
    recompute: checkpointing ? a.oneLayer + weightCopies / Math.max(1, s.layers) : 0,
    outputs: a.outputs + kvCache,
    lossTimeOutputs: a.outputs + (cfg.outputObjectDropped ? 0 : kvCache),
    lossTransient: a.outputs > 0 ? logitsFloat * (mode === 'fp32' ? 1 : 2) : 0,
    inferenceTransient: a.inferenceTransient,
    inputs,
    generate,
  };
}

/**
 * A layer net as built for the configuration's input size (sequence length or image size) where it scales with it,
 * and for its batch where not every tensor grows with the batch.
 */
export function layerNetAt(spec: LayerNetSpec, cfg: Pick<TrainingConfig, 'rebuildAt' | 'seqLen' | 'imageSize' | 'batchSize'>): LayerNetSpec {
  if (!cfg.rebuildAt || (!spec.scalesWithInput && !spec.batchDependent)) return spec;
  const own = spec.input.kind === 'tokens' ? spec.input.seqLen : spec.input.kind === 'image' ? spec.input.size : 1;
  const size = !spec.scalesWithInput ? own : spec.input.kind === 'tokens' ? cfg.seqLen : cfg.imageSize;
  return cfg.rebuildAt(size, spec.batchDependent ? cfg.batchSize : undefined);
}

/**
 * A traced net as torch.compile runs it: what inductor recomputes in backward (see LayerNetSpec.compileRecomputed)
 * is not kept, from the layer that kept it on. Checkpointed nets keep their eager figures.
 */
function compiledNet(net: LayerNetSpec): LayerNetSpec {
  const recomputed = net.compileRecomputed;
  if (!recomputed) return net;
  const points = net.backwardPoints?.map((point) => ({ ...point, elements: point.elements - (point.compileRecomputed ?? 0) }));
  const peak = net.backwardPeakElementsPerSample;
  return {
    ...net,
    savedElementsPerSample: net.savedElementsPerSample - recomputed.elementsPerSample,
    ...(net.autocastSavedBytesPerSample !== undefined ? { autocastSavedBytesPerSample: net.autocastSavedBytesPerSample - recomputed.autocastBytesPerSample } : {}),
    // A peak no point of the layer order recorded (a library part's) drops by all of it: those points come last.
    ...(peak !== undefined ? { backwardPeakElementsPerSample: Math.max(peak - recomputed.elementsPerSample, ...(points ?? []).map((point) => point.elements)) } : {}),
    ...(points ? { backwardPoints: points } : {}),
  };
}

function layerNetFigures(spec: LayerNetSpec, cfg: TrainingConfig, params: ParameterFigures): ActivationFigures {
  const mode = activationMode(cfg);
  const act = mode === 'fp32' ? FP32 : 2;
  const built = layerNetAt(spec, cfg);
  const net = cfg.compiled === true && !(cfg.checkpointing && cfg.mode === 'train') ? compiledNet(built) : built;
  const b = cfg.batchSize;
  const inputElements = net.input.kind === 'image' ? net.input.channels * net.input.size * (net.input.width ?? net.input.size) * (net.input.frames ?? 1)
    : net.input.kind === 'vector' ? net.input.features : 0;
  // The state the loop carries from one step's forward to the next (a memory of the last segment) is alive like the inputs.
  const carried = net.carriedStatePerSample;
  const carriedBytes = carried ? b * (carried.integerBytes + (mode === 'fp32' ? FP32 * carried.floats
    : mode === 'amp' ? FP32 * carried.fullPrecisionFloats + 2 * (carried.floats - carried.fullPrecisionFloats) : 2 * carried.floats)) : 0;
  const inputs = carriedBytes + (net.stepInputBytesPerSample !== undefined ? b * net.stepInputBytesPerSample
    : b * inputElements * (cfg.weightDtype === 'fp32' ? FP32 : 2) + (net.input.kind === 'tokens' ? b * net.input.seqLen * 8 : 0));
  // Under autocast, what the trace found autocast keeps in fp32 (norms, softmax, embeddings) at 4 bytes.
  const perSample = (mode === 'amp' && net.autocastSavedBytesPerSample !== undefined ? net.autocastSavedBytesPerSample : net.savedElementsPerSample * act) + net.fixedBytesPerSample;
  // A frozen first layer keeps no half copy of the input for backward.
  const ampCopies = mode === 'amp' ? params.castable * 2 + (net.frozenPrefix ? 0 : b * inputElements * 2) : 0;
  let saved = b * perSample + ampCopies;
  let recompute = 0;
  /** The recompute peak already holds what lies outside the blocks and is alive then. */
  let recomputeOutsideCounted = false;
  /** The recompute peak where the recomputed block's own backward sets it (its gradients included). */
  let recomputeBackward = 0;
  /** What a block of checkpoint_sequential's last segment, which runs normally, holds in its backward over forward's. */
  let lastSegmentBackward = 0;
  if (cfg.checkpointing && cfg.mode === 'train' && net.blockSavedElements.length > 1) {
    const blocks = net.blockSavedElements;
    // What a checkpoint keeps of a block's input: fp32 under autocast where the trace found it fp32 (a residual
    // stream an embedding feeds), else the activations' size.
    const inputBytes = (k: number): number => (net.blockInputElements[k] ?? 0) * (mode === 'amp' && net.blockInputFullPrecision?.[k] ? FP32 : act);
    const blockTotal = blocks.reduce((x, y) => x + y, 0);
    const outside = net.savedElementsPerSample - blockTotal;
    // What block k holds at once in its own backward (its largest op's gradients and temporaries over what it kept
    // before that op): a block of a few huge intermediates (a linear attention's running sums of k v^T) peaks there.
    const ownPeak = (k: number): number => (mode === 'amp' && net.blockBackwardPeakAutocastBytes
      ? net.blockBackwardPeakAutocastBytes[k] ?? 0 : (net.blockBackwardPeakElements?.[k] ?? 0) * act);
    if (net.checkpointSegments || cfg.checkpointSegments) {
      // checkpoint_sequential in the segments the script gives (else round(sqrt(n))), split as torch does: n //
      // segments blocks in each checkpointed segment, the rest in the last, which runs normally. Each checkpointed
      // segment keeps its input, and backward recomputes one at a time.
      const segments = Math.min(blocks.length, Math.max(1, cfg.checkpointSegmentCount ?? Math.round(Math.sqrt(blocks.length))));
      const perSegment = Math.floor(blocks.length / segments);
      const sum = (from: number, to: number) => blocks.slice(from, to).reduce((x, y) => x + y, 0);
      const segmentSaved: number[] = [];
      for (let k = 0; k < segments - 1; k++) segmentSaved.push(sum(k * perSegment, (k + 1) * perSegment));
      segmentSaved.push(sum((segments - 1) * perSegment, blocks.length));
      const segmentInputs = segmentSaved.slice(0, -1).reduce((total, _s, k) => total + inputBytes(k * perSegment), 0);
      saved = b * ((outside + segmentSaved[segmentSaved.length - 1]) * act + segmentInputs + net.fixedBytesPerSample) + ampCopies;
      recompute = b * Math.max(...segmentSaved.slice(0, -1), 0) * act;
      // Each block's own backward runs beside what the blocks before it in its segment keep. A recomputed segment's,
      // with the inputs of the segments up to it; the last segment's at the start of backward, over what forward
      // kept less what that block and the later ones kept.
      let worstBackward = 0;
      for (let k = 0; k < segments - 1; k++) {
        const inputsKept = segmentSaved.slice(0, k + 1).reduce((total, _s, m) => total + inputBytes(m * perSegment), 0);
        let earlier = 0;
        for (let j = k * perSegment; j < (k + 1) * perSegment; j++) {
          worstBackward = Math.max(worstBackward, inputsKept + earlier + ownPeak(j));
          earlier += blocks[j]! * act;
        }
      }
      recomputeBackward = b * worstBackward;
      let later = 0;
      for (let j = blocks.length - 1; j >= (segments - 1) * perSegment; j--) {
        later += blocks[j]! * act;
        lastSegmentBackward = Math.max(lastSegmentBackward, b * (ownPeak(j) - later));
      }
    } else {
      // Each block checkpointed on its own (what the refactoring and the libraries do): it keeps its input, and
      // backward recomputes one block at a time.
      const inputs = net.blockInputElements.reduce((sum, _input, k) => sum + inputBytes(k), 0);
      saved = b * ((outside + (net.blockOutputsKeptOutsideElements ?? 0)) * act + inputs + net.fixedBytesPerSample) + ampCopies;
      // Backward recomputes the last block first; when block k is recomputed, the inputs of blocks 0..k are still
      // kept (the later ones are freed): the worst k is the recompute peak.
      let kept = 0;
      let worst = 0;
      let worstBackward = 0;
      const before = net.blockOutsideBeforeElements;
      blocks.forEach((blockSaved, k) => {
        const input = inputBytes(k);
        // Traced, only what forward kept before block k is still alive then (later layers' tensors are freed),
        // and the recomputed block keeps the very input its checkpoint holds.
        worst = Math.max(worst, before ? kept + Math.max(input, blockSaved * act) + (before[k] ?? 0) * act : kept + input + blockSaved * act);
        worstBackward = Math.max(worstBackward, kept + input + ownPeak(k) + (before?.[k] ?? 0) * act);
        kept += input;
      });
      recompute = b * worst;
      recomputeBackward = b * worstBackward;
      if (before) recomputeOutsideCounted = true;
    }
  }
  // The loss reads the output (an LSTM or GPT language model's logits dominate its peak). cross_entropy, measured in
  // units of the logits in fp32 (measure_cross_entropy.py): in fp32 it keeps its log_softmax (1) and backward starts
  // with two gradients (2); under autocast it keeps 1.5 and backward adds 1; on bf16/fp16 weights, 0.5 and 1.
  const outputs = b * (net.returnedOutputElementsPerSample ?? net.outputElementsPerSample) * act;
  const logSoftmax = b * net.outputElementsPerSample * FP32;
  // A forward that ends in log_softmax keeps its output already: nll_loss keeps nothing of it, and holding the
  // output adds nothing; backward still starts with the loss's gradient and log_softmax's (2 in fp32).
  const ownLogSoftmax = net.outputKeptByForward === true;
  // Logits cast to fp32 before the loss (`logits.float()`, or fp32 under autocast): the loss is fp32's.
  const lossMode = (mode === 'amp' && net.lossInputFp32?.autocast) || (mode === 'half' && net.lossInputFp32?.explicit) ? 'fp32' : mode;
  // What the step's own code keeps of the output (see stepKept below), its fp32 part at 4 bytes whatever the mode.
  const forwardsRun = cfg.mode === 'train' ? Math.max(1, cfg.forwardsPerBackward ?? 1) : 1;
  const stepKeptFp32 = net.stepKeptFp32ElementsPerSample ?? 0;
  const stepKeptBytes = cfg.mode === 'train' ? (b / forwardsRun) * (((net.stepKeptElementsPerSample ?? 0) - stepKeptFp32) * act + stepKeptFp32 * FP32) : 0;
  // A hand-written loss the trace followed, with no cross-entropy in it, keeps what the trace found in its place.
  const handWrittenLoss = cfg.mode === 'train' && net.stepLossInPlaceOfOutputLoss === true;
  const lossKept = ownLogSoftmax ? 0 : handWrittenLoss ? stepKeptBytes : logSoftmax * (lossMode === 'fp32' ? 1 : lossMode === 'amp' ? 1.5 : 0.5);
  // Compiled with the loss inside forward, inductor computes the logits' gradient in one fused kernel from what
  // forward kept, which it frees as it goes: no logits-sized gradient beside it (measured on the H200, a GPT of
  // vocabulary 8192: backward's peak 2 x the logits over what forward kept eager, 0.1 x compiled; compiled with
  // the loss outside forward, as eager; test/gpu/estimator/results/compile_saved.json).
  const fusedLoss = cfg.compiled === true && net.lossInForward === true;
  // A hand-written term beside the cross-entropy (a soft Dice) adds its own gradients at backward's start.
  const extraGradients = net.stepLossExtraGradientsPerSample;
  const stepLossBackward = cfg.mode === 'train' && extraGradients
    ? (b / forwardsRun) * ((extraGradients.elements - extraGradients.fp32) * act + extraGradients.fp32 * FP32) : 0;
  const lossBackward = (fusedLoss ? 0 : ownLogSoftmax ? 2 * logSoftmax : logSoftmax * (lossMode === 'fp32' ? 2 : 1)) + stepLossBackward;
  const outputHeld = cfg.outputKept === true && cfg.mode === 'train' && !ownLogSoftmax;
  // A loss in checkpointed chunks: backward makes one chunk's logits again, with cross_entropy's fp32 log-softmax
  // and the two gradients its backward starts with (the fp32 units above), beside everything forward kept.
  const chunkLossBackward = cfg.mode === 'train' && cfg.recomputedLossElements !== undefined ? 3 * cfg.recomputedLossElements * FP32 : 0;
  saved += lossKept + (outputHeld ? outputs : 0);
  // Weights weight_norm makes at every call, whatever the batch: one set per forward before the backward (b counts
  // the samples of all of them). What the step's code keeps of the returned outputs, once per sample: its loss's
  // tensors are freed first in backward, so a peak later in backward (the traced one below) is reached without them.
  const reparametrized = cfg.mode === 'train' ? forwardsRun * (net.reparametrizedWeightElements ?? 0) * act : 0;
  // Its fp32 part (a loss over `logits.float()` under autocast) at 4 bytes an element whatever the mode; counted as the
  // loss's own above where it is all the loss keeps.
  const stepKept = handWrittenLoss ? 0 : stepKeptBytes;
  saved += reparametrized + stepKept;
  const stepLossGradients = cfg.mode === 'train' ? (b / forwardsRun) * (net.stepLossGradientElementsPerSample ?? 0) * act : 0;
  const convWorkspace = net.hasConvolution ? CUDNN_CONV_BACKWARD_WORKSPACE : 0;
  // A traced net says where backward peaks: what the layers up to one still keep, plus that layer's gradients (a
  // large tensor early in forward is reached late in backward, when most of the rest is freed).
  // Checkpointed, the order no longer says what is alive; while a segment is recomputed, its largest layer's
  // gradient pair is (the recompute term below).
  const checkpointed = cfg.checkpointing && cfg.mode === 'train';
  const gradientPair = b * (net.gradientPairElementsPerSample ?? 0) * act;
  const tracedBackward = net.backwardPeakElementsPerSample !== undefined && !checkpointed
    ? Math.max(0, b * ((net.backwardPeakElementsPerSample - net.savedElementsPerSample) * act - (net.fixedBytesAfterBackwardPeak ?? 0)
      + (mode === 'amp' ? net.backwardPeakAutocastSurplusBytesPerSample ?? 0 : 0)) - stepKept) +
      (net.backwardPeakWithoutConvolution ? 0 : convWorkspace) : 0;
  // A frozen prefix runs as a no-grad forward before anything is kept: its tensors alive at once may be the peak.
  const frozenPrefixLive = net.frozenPrefix ? b * net.frozenPrefix.liveElementsPerSample * act : 0;
  // What forward's locals hold at once over what it keeps (int64 index arithmetic alive until the function returns),
  // inside forward: before the loss has kept anything or the step holds the output.
  const forwardLiveExcess = checkpointed ? 0 : b * (net.forwardLiveExcessBytesPerSample?.[mode] ?? 0) - lossKept - (outputHeld ? outputs : 0);
  /**
   * Under save_on_cpu() the net's saved tensors live in host memory: the GPU holds what forward holds at once (as in a
   * no-grad forward), the outputs the step keeps and the loss's tensors; backward brings one operation's saved
   * tensors back at a time, beside its gradients (the largest tensor and the largest gradient pair).
   */
  const savedOnHostFigures = (): ActivationFigures => {
    const live = b * (mode === 'amp' && net.autocastInferenceLiveBytesPerSample !== undefined
      ? net.autocastInferenceLiveBytesPerSample : net.inferenceLiveElementsPerSample * act);
    const onDevice = ampCopies + lossKept + (outputHeld ? outputs : 0);
    const oneOperation = b * net.largestElementsPerSample * act + gradientPair + convWorkspace;
    return {
      saved: onDevice,
      forwardTransient: Math.max(0, live - onDevice),
      backwardTransient: Math.max(oneOperation, lossBackward, chunkLossBackward),
      recompute: 0,
      outputs,
      lossTransient: logSoftmax,
      inferenceTransient: b * Math.max(0, (mode === 'amp' && net.autocastInferenceLiveBytesPerSample !== undefined
        ? net.autocastInferenceLiveBytesPerSample : net.inferenceLiveElementsPerSample * act) - (net.returnedOutputElementsPerSample ?? net.outputElementsPerSample) * act),
      inputs,
    };
  };
  if (cfg.savedOnHost && cfg.mode === 'train' && !checkpointed) return savedOnHostFigures();
  // A stem before the first block that holds more than the net's largest tensor (a full-resolution convolution's
  // output) makes the largest gradient pair too, when only its own tensors are left.
  const stemSaved = recomputeOutsideCounted ? net.blockOutsideBeforeElements?.[0] ?? 0 : 0;
  const stemBackward = stemSaved >= net.largestElementsPerSample && stemSaved > 0 ? b * stemSaved * act + gradientPair : undefined;
  return {
    saved,
    forwardTransient: Math.max(0, frozenPrefixLive - saved, forwardLiveExcess),
    // Backward frees each activation as it makes its gradient: a fraction of the largest tensor on top
    // (gpu-truth ResNet-50: 35 MB at batch 32 over a 103 MB largest tensor).
    backwardTransient: Math.max(BACKWARD_TRANSIENT_OF_LARGEST * b * net.largestElementsPerSample * act + convWorkspace, lossBackward, tracedBackward,
      lastSegmentBackward, chunkLossBackward, stepLossGradients),
    // While the first segment is recomputed, the stem's activations are still alive and its backward has the same transients.
    // The step's output, where the step holds it through backward (`logits = model(x)`), is alive then too.
    // The stem's backward runs after every block's, when their inputs and recomputed tensors are freed: its gradient
    // pair comes over the stem's tensors alone, not over a recomputed block's.
    recompute: recompute > 0 ? Math.max(recompute + Math.max(BACKWARD_TRANSIENT_OF_LARGEST * b * net.largestElementsPerSample * act, stemBackward === undefined ? gradientPair : 0),
      recomputeBackward, stemBackward ?? 0) + (recomputeOutsideCounted ? 0 : b * (net.savedElementsPerSample - net.blockSavedElements.reduce((x, y) => x + y, 0)) * act) +
      convWorkspace + (outputHeld ? outputs : 0) : 0,
    outputs,
    lossTransient: logSoftmax,
    // What forward holds at once beside this batch's outputs: its live peak counts the outputs where the last layer
    // makes them, and the no-grad step adds them (with the previous batch's) on its own.
    inferenceTransient: b * Math.max(0, (mode === 'amp' && net.autocastInferenceLiveBytesPerSample !== undefined
      ? net.autocastInferenceLiveBytesPerSample : net.inferenceLiveElementsPerSample * act) - (net.returnedOutputElementsPerSample ?? net.outputElementsPerSample) * act),
    // The loss's fp32 log-softmax is alive until the head's backward has run; a net's own layers come after it.
    backwardCurve: net.backwardPoints && !checkpointed
      ? net.backwardPoints.map((p) => ({ bytes: b * p.elements * act + reparametrized + logSoftmax + convWorkspace, parametersBefore: p.parametersBefore })) : undefined,
    inputs,
    ...(net.sparseGradientPerSample && cfg.mode === 'train' && params.trainable > 0
      ? { sparseGradients: b * (net.sparseGradientPerSample.rows * 8 + net.sparseGradientPerSample.values * dtypeBytes(cfg.weightDtype)) } : {}),
  };
}

/**
 * The estimator's strategy for a configuration. One GPU without a wrapper in the script (or a --strategy) is a
 * plain run; --gpus > 1 implies a wrapper (DDP when none is named); FSDP is FULL_SHARD unless the script asks for
 * SHARD_GRAD_OP, which the CLI's values cannot express.
 */
export function shardingStrategy(cfg: Pick<TrainingConfig, 'gpus' | 'strategy' | 'dataParallel' | 'shardGradOp'>): ShardingStrategy {
  if (cfg.gpus <= 1 && !cfg.dataParallel) return 'none';
  if (cfg.strategy === 'fsdp' && cfg.shardGradOp) return 'fsdp-grad-op';
  return cfg.strategy;
}

/** What one GPU holds of the persistent state, and what the wrapper gathers or copies on top, per phase. */
interface Layout {
  /** Weights at the optimizer step (the shard under ZeRO-3/FSDP). */
  weightsAtStep: number;
  /** Weights through forward and the start of backward: the shard plus whatever is gathered for compute. */
  weightsInCompute: number;
  /** Gathered on top of weightsInCompute later in backward (the blocks being computed, prefetched). */
  weightsLateBackward: number;
  /** Gradients kept after backward (the shard under ZeRO-2/3 and FSDP). */
  gradients: number;
  /** DDP's gradient buckets: alive from DDP(...) on, in every phase. */
  bucket: number;
  /** Unsharded gradients on top of the shard late in backward (FSDP's root unit, the block being reduce-scattered). */
  gradientsLateBackward: number;
  optimizerShare: number;
}

function layoutFor(cfg: TrainingConfig, params: ParameterFigures): Layout {
  const n = Math.max(1, cfg.gpus);
  const strategy = shardingStrategy(cfg);
  const W = params.weightBytes;
  const G = params.gradBytes;
  const wBytes = dtypeBytes(cfg.weightDtype);
  const gradPerParam = params.trainable > 0 ? G / params.trainable : 0;
  const count = cfg.model.kind === 'transformer' ? countTransformerParameters(cfg.model) : undefined;
  const perLayer = count?.perLayer ?? 0;
  const whole: Layout = { weightsAtStep: W, weightsInCompute: W, weightsLateBackward: 0, gradients: G, bucket: 0, gradientsLateBackward: 0, optimizerShare: 1 };
  switch (strategy) {
    case 'none': return whole;
    // DDP copies gradients into its own communication buckets (gradient_as_bucket_view defaults to False); the
    // Reducer allocates them when the model is wrapped, so they exist at world size 1 too (measured: weights plus
    // one gradient-sized copy at the first step, test/gpu/multi/results/ws1.json).
    case 'ddp': return { ...whole, bucket: G };
    case 'zero1': return { ...whole, optimizerShare: 1 / n };
    case 'zero2': return { ...whole, gradients: G / n, optimizerShare: 1 / n };
    // DeepSpeed ZeRO-3 gathers one layer's full weights at a time and prefetches the next.
    case 'zero3': return {
      ...whole, weightsAtStep: W / n, weightsInCompute: W / n + (n > 1 ? 2 * perLayer * wBytes : 0), gradients: G / n, optimizerShare: 1 / n,
    };
    case 'fsdp': {
      // FSDP2 wrapped per block, then the model: the root unit (embeddings, final norm, head) stays gathered from
      // forward to the end of backward (measured at world size 1: +200 MiB for GPT-2 medium, +498 MiB for Llama
      // 1.1B, their root units), its unsharded gradients until backward ends; late in backward one block is
      // gathered, the next prefetched, and the previous one's unsharded gradient is being reduce-scattered.
      const root = (count?.root ?? 0) * wBytes;
      return {
        weightsAtStep: W / n, weightsInCompute: W / n + root, weightsLateBackward: 2 * perLayer * wBytes,
        gradients: G / n, bucket: 0, gradientsLateBackward: ((count?.root ?? 0) + perLayer) * gradPerParam, optimizerShare: 1 / n,
      };
    }
    case 'fsdp-grad-op':
      // SHARD_GRAD_OP keeps every unit gathered from its forward to the end of backward: the shard plus a whole
      // copy (measured at world size 1: forward and backward equal DDP's, the optimizer step full shard's).
      return {
        weightsAtStep: W / n, weightsInCompute: W / n + W, weightsLateBackward: 0,
        gradients: G / n, bucket: 0, gradientsLateBackward: perLayer * gradPerParam, optimizerShare: 1 / n,
      };
  }
}

const ZERO_BREAKDOWN: Breakdown = { weights: 0, gradients: 0, optimizerStates: 0, activations: 0, other: 0 };

function total(b: Breakdown): number {
  return b.weights + b.gradients + b.optimizerStates + b.activations + b.other;
}

/**
 * What vmap(grad(f)) holds of forward and backward beside the per-sample gradients, in units of what a plain forward
 * keeps at the same batch. Measured on the H200 (test/gpu/estimator/probe_step7.py, results/step7_per_sample.json):
 * 2.82 for three conv + GroupNorm + tanh nets at batch 256 and 512, 2.48 for a conv + ReLU net, 2 for MLPs (whose
 * per-sample gradients are nearly all of it).
 */
const VMAP_GRAD_ACTIVATIONS = 2.8;

/**
 * The parameters of the model's largest layer: a traced net's from the parameters before each layer, a
 * transformer's largest tensor; otherwise the whole model (a bound, never less).
 */
function largestLayerParameters(cfg: TrainingConfig): number {
  const spec = cfg.model;
  if (spec.kind === 'transformer') return countTransformerParameters(spec).largestTensor;
  const before = (spec.backwardPoints ?? []).map((point) => point.parametersBefore);
  if (before.length === 0) return spec.parameters;
  const edges = [...new Set([0, ...before, spec.parameters])].sort((a, b) => a - b);
  let largest = 0;
  for (let k = 1; k < edges.length; k++) largest = Math.max(largest, edges[k]! - edges[k - 1]!);
  return largest;
}

/** fp32 copies of one decoding step's logits an encoder-decoder's generate() holds at once (measured, see below). */
const ENCODER_DECODER_LOGIT_COPIES = 4;

/**
 * Backward's transient over what is kept, in units of the plain backward's own transient: measured 1.3-1.7 for
 * orders 1 and 2 (a few layer-wide gradients at once, whatever the depth).
 */
const INPUT_DERIVATIVE_TRANSIENT = 1.7;

/**
 * A frozen network in the loss run with grad on the model's output (a perceptual loss): what its forward saves is kept
 * beside the model's until backward, which runs through it first. Its gradients are largest at its first layers, when
 * backward has freed most of what it saved: its start, with all of it kept, is the worse point.
 */
function withLossNetwork(cfg: TrainingConfig, act: ActivationFigures): ActivationFigures {
  const network = cfg.mode === 'train' ? cfg.lossNetwork : undefined;
  if (!network) return act;
  const saved = network.savedBytesPerSample * cfg.batchSize + network.savedBytes;
  // Midway through the model's own backward (its curve) the loss network's is done: its saved tensors are gone.
  return { ...act, saved: act.saved + saved };
}

/** What a training step keeps and peaks at when its loss is made of derivatives with graphs of their own. */
function withInputDerivatives(cfg: TrainingConfig, act: ActivationFigures): ActivationFigures {
  const order = cfg.mode === 'train' ? Math.min(cfg.inputDerivativeOrder ?? 0, HIGHEST_DERIVATIVE_ORDER) : 0;
  if (order <= 0) return act;
  // Backward walks the derivatives' graphs too: the layer order of the plain forward no longer says where it peaks.
  // Only the differentiated model's share grows (a critic's forward, not the generator's beside it).
  const share = cfg.inputDerivativeShare ?? 1;
  // Its other forwards into the same backward (a critic's on the real and fake batches) keep their own share each.
  const otherForwards = cfg.inputDerivativeShare !== undefined ? Math.max(0, (cfg.inputDerivativeModelForwards ?? 1) - 1) : 0;
  return {
    ...act,
    saved: act.saved * (1 + share * (otherForwards + derivativeKeptRatio(cfg.inputDerivativeActivation ?? DEFAULT_DERIVATIVE_ACTIVATION, order) - 1)),
    backwardTransient: act.backwardTransient * INPUT_DERIVATIVE_TRANSIENT,
    backwardCurve: undefined,
  };
}

/**
 * What a step keeps whose backward runs through the graphs of forwards run in loops before it (kept-graphs.ts): every
 * kept forward's saved tensors, as one forward of all their rows; for a second-order inner step, what its gradient's
 * backward saved too (the output gradients the trace counted, else as much again as its forward kept); the fast
 * weights the graphs hold. Backward runs through one forward's graph at a time: its transients are those of the
 * largest single forward, over what is kept (and, through create_graph graphs, as much more as derivative graphs take).
 */
function withKeptGraphs(cfg: TrainingConfig, kept: NonNullable<TrainingConfig['keptGraphs']>, params: ParameterFigures,
  figuresAt: (batch: number) => ActivationFigures): ActivationFigures {
  const all = figuresAt(Math.max(1, Math.round(cfg.batchSize * kept.rows)));
  const one = figuresAt(Math.max(1, Math.round(cfg.batchSize * kept.largestRows)));
  const spec = cfg.model;
  const elementBytes = activationMode(cfg) === 'fp32' ? FP32 : 2;
  const createGraphRows = cfg.batchSize * kept.createGraphRows;
  const perRow = spec.kind === 'layers' ? layerNetAt(spec, cfg).createGraphElementsPerSample : undefined;
  const gradientGraphs = perRow !== undefined ? createGraphRows * perRow * elementBytes
    : kept.rows > 0 ? (all.saved / (cfg.batchSize * kept.rows)) * createGraphRows : 0;
  const fastWeights = kept.weightCopies * params.weightBytes;
  return {
    ...all,
    saved: all.saved + gradientGraphs + fastWeights,
    // The forwards run one at a time: what one holds beside what it keeps is the largest one's.
    forwardTransient: one.forwardTransient,
    backwardTransient: one.backwardTransient * (kept.createGraphRows > 0 ? INPUT_DERIVATIVE_TRANSIENT : 1),
    backwardCurve: undefined,
  };
}

export function estimate(cfg: TrainingConfig): EstimateNumbers {
  const own = phaseParts(cfg);
  const tower = cfg.jointTower && cfg.mode === 'train' ? phaseParts(jointTowerConfig(cfg, cfg.jointTower)) : undefined;
  const parts = tower ? withJointTower(own, tower) : own.parts;
  const { params, layout } = own;
  const phases: Record<PeakPhase, number> = { forward: total(parts.forward), backward: total(parts.backward), 'optimizer-step': total(parts['optimizer-step']) };
  let peakPhase: PeakPhase = 'forward';
  for (const phase of ['backward', 'optimizer-step'] as const) if (phases[phase] > phases[peakPhase]) peakPhase = phase;
  const peakAllocated = phases[peakPhase];
  return {
    parameters: params.total + (tower?.params.total ?? 0),
    trainableParameters: params.trainable + (tower?.params.trainable ?? 0),
    breakdown: { ...parts[peakPhase] },
    peakAllocated,
    peakReserved: reservedFor(peakAllocated, peakPhase, cfg),
    cudaContext: CUDA_CONTEXT_BYTES,
    peakPhase,
    phases,
    gradientsAfterBackward: cfg.mode === 'train' ? layout.gradients + (tower?.layout.gradients ?? 0) : 0,
  };
}

/** The other tower's training config: the model's settings, its own net and image size, nothing resident twice. */
function jointTowerConfig(cfg: TrainingConfig, tower: NonNullable<TrainingConfig['jointTower']>): TrainingConfig {
  const { jointTower: _tower, residentDataBytes: _resident, modelCopies: _copies, copyForwardUnderNoGrad: _copyForward, ...rest } = cfg;
  void _tower;
  void _resident;
  void _copies;
  void _copyForward;
  return { ...rest, modelName: tower.name, model: tower.model, imageSize: tower.imageSize, rebuildAt: tower.rebuildAt, frozenFraction: 0, lora: undefined,
    checkpointing: tower.checkpointing ?? cfg.checkpointing };
}

type PhaseFigures = ReturnType<typeof phaseParts>;

/**
 * Two towers trained in one step: both forwards keep their activations until backward reaches them. Backward runs
 * through one tower, then the other: while the first runs, the second's activations are still kept and it has no
 * gradients yet; while the second runs, the first's gradients exist and its activations are freed. Which runs first
 * is autograd's order, not the script's text: the worse of the two orders is counted. The step holds both models'
 * weights, gradients and states; the workspace and inputs (`other`) are the model's.
 */
function withJointTower(own: PhaseFigures, tower: PhaseFigures): Record<PeakPhase, Breakdown> {
  const plus = (x: Breakdown, y: Omit<Breakdown, 'other'>): Breakdown => ({
    weights: x.weights + y.weights, gradients: x.gradients + y.gradients, optimizerStates: x.optimizerStates + y.optimizerStates,
    activations: x.activations + y.activations, other: x.other,
  });
  // The other tower before its backward (its forward's holdings) and after it (all its gradients, nothing kept).
  const before = (p: PhaseFigures): Omit<Breakdown, 'other'> => ({ ...p.parts.forward });
  const after = (p: PhaseFigures): Omit<Breakdown, 'other'> => ({ ...p.parts.forward, gradients: p.layout.gradients, activations: 0 });
  const worse = (x: Breakdown, y: Breakdown): Breakdown => (total(x) >= total(y) ? x : y);
  const ownFirst = worse(plus(own.parts.backward, before(tower)), plus(tower.parts.backward, after(own)));
  const towerFirst = worse(plus(tower.parts.backward, before(own)), plus(own.parts.backward, after(tower)));
  const { other: _other, ...towerStep } = tower.parts['optimizer-step'];
  void _other;
  return {
    forward: plus(own.parts.forward, before(tower)),
    backward: worse(ownFirst, towerFirst),
    'optimizer-step': plus(own.parts['optimizer-step'], towerStep),
  };
}

function phaseParts(cfg: TrainingConfig): { parts: Record<PeakPhase, Breakdown>; params: ParameterFigures; layout: Layout } {
  const params = parameterFigures(cfg);
  const sharded = layoutFor(cfg, params);
  // A copy of the model (an EMA model) is whole on every GPU, in every phase.
  // A frozen loss network's weights (a perceptual loss's VGG) are whole on every GPU too.
  const resident = params.copyBytes + (cfg.lossNetwork?.weightBytes ?? 0);
  const layout: Layout = { ...sharded, weightsAtStep: sharded.weightsAtStep + resident, weightsInCompute: sharded.weightsInCompute + resident };
  const optimizerStates = cfg.offloadOptimizer ? 0 : params.optimizerBytes * layout.optimizerShare;
  const optimizerTemp = cfg.offloadOptimizer ? 0 : params.optimizerTempBytes * layout.optimizerShare;
  // Several forwards before one backward keep every call's activations: as one forward of all their samples.
  const forwards = cfg.mode === 'train' ? Math.max(1, cfg.forwardsPerBackward ?? 1) : 1;
  // A sample of several sequences (a multiple-choice model's choices) runs as that many rows of the batch.
  const rows = forwards * (cfg.sequencesPerSample ?? 1);
  const figuresAt = (batch: number): ActivationFigures => {
    const at = batch !== cfg.batchSize ? { ...cfg, batchSize: batch } : cfg;
    return cfg.model.kind === 'transformer' ? transformerFigures(cfg.model, at, params) : layerNetFigures(cfg.model, at, params);
  };
  const kept = cfg.mode === 'train' ? cfg.keptGraphs : undefined;
  const act = withLossNetwork(cfg, withInputDerivatives(cfg, kept ? withKeptGraphs(cfg, kept, params, (batch) => figuresAt(batch * (cfg.sequencesPerSample ?? 1))) : figuresAt(cfg.batchSize * rows)));
  const base = LIBRARY_WORKSPACE_BYTES + act.inputs + (cfg.residentDataBytes ?? 0);
  // Each phase's own parts, so that the breakdown describes the peak phase and adds up to the peak.
  const parts: Record<PeakPhase, Breakdown> = { forward: ZERO_BREAKDOWN, backward: ZERO_BREAKDOWN, 'optimizer-step': ZERO_BREAKDOWN };
  if (cfg.mode === 'train') {
    const sparse = act.sparseGradients ?? 0;
    const gradsAtForward = cfg.gradsKeptAcrossSteps || cfg.accumulation > 1 ? layout.gradients + sparse : 0;
    // A copy's no-grad forward after the model's (MoCo's key encoder, measured on the H200 to set the step's peak:
    // probe_moco12) holds its live tensors and its output while everything the model's forward kept is alive.
    const copyForward = cfg.copyForwardUnderNoGrad ? act.inferenceTransient + act.outputs : 0;
    parts.forward = {
      weights: layout.weightsInCompute, gradients: gradsAtForward + layout.bucket, optimizerStates,
      activations: act.saved, other: base + Math.max(act.forwardTransient, copyForward),
    };
    // The head's gradient is made whole before any wrapper reduces or shards it.
    const backwardStart: Breakdown = {
      weights: layout.weightsInCompute, gradients: gradsAtForward + layout.bucket + (gradsAtForward ? 0 : params.headGradBytes), optimizerStates,
      activations: act.saved, other: base + act.backwardTransient,
    };
    const backwardEnd: Breakdown = {
      weights: layout.weightsInCompute + layout.weightsLateBackward, gradients: layout.gradients + sparse + layout.bucket + layout.gradientsLateBackward,
      optimizerStates, activations: act.recompute, other: base,
    };
    parts.backward = total(backwardStart) >= total(backwardEnd) ? backwardStart : backwardEnd;
    // Midway through backward the later layers' gradients exist while the earlier layers' activations are still
    // kept: a parameter-heavy net (a wide MLP) peaks there.
    if (!gradsAtForward && act.backwardCurve && params.trainable > 0) {
      const perParam = (layout.gradients + layout.gradientsLateBackward) / params.trainable;
      for (const point of act.backwardCurve) {
        const gradients = Math.max(0, params.trainable - point.parametersBefore) * perParam;
        const midway: Breakdown = {
          weights: layout.weightsInCompute, gradients: gradients + layout.bucket, optimizerStates, activations: point.bytes, other: base,
        };
        if (total(midway) > total(parts.backward)) parts.backward = midway;
      }
    }
    const stepGradients = params.gradBytes > 0 ? layout.gradients * params.stepGradBytes / params.gradBytes : 0;
    parts['optimizer-step'] = {
      weights: layout.weightsAtStep, gradients: stepGradients + sparse + layout.bucket, optimizerStates, activations: 0, other: base + optimizerTemp,
    };
    if (cfg.perSampleGradients) {
      // vmap(grad(f)) over the batch: a gradient of every trainable parameter for each sample, on top of what its
      // forward and backward hold. The step then clips each parameter's per-sample gradients (one product of that
      // size at a time) while they are all alive, and the optimizer steps with them still bound.
      const perSample = cfg.batchSize * params.trainable * dtypeBytes(cfg.weightDtype);
      const held = cfg.perSampleGradients.keptAcrossSteps ? 2 * perSample : perSample;
      parts.backward = {
        weights: layout.weightsInCompute, gradients: gradsAtForward + layout.bucket + held, optimizerStates,
        activations: act.saved * VMAP_GRAD_ACTIVATIONS, other: base,
      };
      const clipProduct = cfg.batchSize * Math.min(params.trainable, largestLayerParameters(cfg)) * dtypeBytes(cfg.weightDtype);
      parts['optimizer-step'] = {
        ...parts['optimizer-step'], gradients: stepGradients + layout.bucket + perSample, other: base + Math.max(optimizerTemp, clipProduct),
      };
    }
  } else if (cfg.mode === 'infer-no-grad') {
    // The previous batch's outputs live until the loop rebinds them, while the next forward runs. Autocast caches a
    // half copy of every fp32 weight that still requires grad (model.eval() and no_grad leave requires_grad on) for as
    // long as the autocast region lasts (measured: ViT-L/16, 580 MiB = 2 bytes x 304M parameters, gone with
    // requires_grad_(False); test/gpu/estimator/results/round3.json).
    const weightCache = activationMode(cfg) === 'amp' && (cfg.frozenFraction ?? 0) < 1 ? params.castable * 2 : 0;
    // The model's own loss (labels given) runs while the previous batch's outputs are alive. The script's own loss
    // over the outputs (an fp32 log-likelihood: `log_softmax(logits.float())`) comes after the name is rebound: the
    // previous batch's outputs are gone by then, and the peak is this batch's outputs, the fp32 copy and
    // log_softmax's fp32 output.
    const lossTransient = cfg.outputsUnscored ? 0 : act.lossTransient;
    const activations = act.generate ? Math.max(act.generate.prefill, act.generate.end) : cfg.lossAfterRebind
      ? Math.max(2 * act.outputs + act.inferenceTransient, (act.lossTimeOutputs ?? act.outputs) + lossTransient)
      : 2 * act.outputs + Math.max(lossTransient, act.inferenceTransient);
    parts.forward = { ...ZERO_BREAKDOWN, weights: layout.weightsInCompute + weightCache, activations, other: base };
  } else {
    // Without no_grad every forward builds a graph; the previous one lives until its outputs are rebound, unless the
    // forward runs in a function that returns only detached values (the graph is freed on return).
    const graphs = cfg.graphFreedOnReturn ? 1 : 2;
    parts.forward = { ...ZERO_BREAKDOWN, weights: layout.weightsInCompute, activations: graphs * act.saved, other: base + act.forwardTransient };
  }
  return { parts, params, layout };
}

/**
 * The caching allocator rounds blocks up and keeps freed blocks cached: gpu-truth shows reserved 0-20% above
 * allocated, highest where many mid-sized tensors churn (CNNs, foreach optimizer temporaries).
 */
function reservedFor(peakAllocated: number, phase: PeakPhase, cfg: TrainingConfig): number {
  let factor = cfg.model.kind === 'layers' ? RESERVE_FACTOR_LAYER_NETS : RESERVE_FACTOR_TRANSFORMERS;
  if (phase === 'optimizer-step' && cfg.optimizerImpl === 'foreach') factor = Math.max(factor, RESERVE_FACTOR_FOREACH_STEP);
  return Math.round(peakAllocated * factor);
}

/**
 * cuDNN's workspace in convolution backward (cudnn.benchmark off): a small CNN at batch 128 on 32x32 images
 * peaked 110 MiB above what it keeps (test/gpu/estimator); ResNet-50 at batch 8 about 60 MB.
 */
const CUDNN_CONV_BACKWARD_WORKSPACE = 100 * 1024 * 1024;

/** Share of the largest activation that a layer net's backward holds on top of what forward saved. */
const BACKWARD_TRANSIENT_OF_LARGEST = 0.35;

export const RESERVE_FACTOR_TRANSFORMERS = 1.06;
export const RESERVE_FACTOR_LAYER_NETS = 1.16;
export const RESERVE_FACTOR_FOREACH_STEP = 1.15;

/**
 * Largest batch size whose reserved peak plus the CUDA context fits `capacity`, at most `MAX_BATCH_SIZE`; null when
 * not even 1 fits.
 */
export function maxBatchSize(cfg: TrainingConfig, capacity: number, footprint: (batch: number) => number = batchFootprint(cfg)): number | null {
  const fits = (batch: number): boolean => footprint(batch) <= capacity;
  if (!fits(1)) return null;
  if (fits(MAX_BATCH_SIZE)) return MAX_BATCH_SIZE;
  let low = 1;
  let high = 2;
  while (fits(high)) {
    low = high;
    high *= 2;
  }
  while (high - low > 1) {
    const mid = Math.floor((low + high) / 2);
    if (fits(mid)) low = mid;
    else high = mid;
  }
  return low;
}

/**
 * The memory a batch size takes on a GPU (peak reserved and the CUDA context), remembered per batch size: the
 * searches of several GPUs try the same sizes (1, the largest, the powers of two), each a whole estimate.
 */
function batchFootprint(cfg: TrainingConfig): (batch: number) => number {
  // A net whose forward does not all grow with the batch is searched with what it keeps per sample at the script's
  // batch, traced once (an MoE's expert buffers shared by that batch), not traced again for every batch tried.
  const rebuildAt = cfg.rebuildAt;
  const pinned = rebuildAt && cfg.model.kind === 'layers' && cfg.model.batchDependent ? { rebuildAt: (size: number) => rebuildAt(size, cfg.batchSize) } : {};
  const known = new Map<number, number>();
  return (batch) => {
    let bytes = known.get(batch);
    if (bytes === undefined) {
      const result = estimate({ ...cfg, ...pinned, batchSize: batch });
      known.set(batch, (bytes = result.peakReserved + result.cudaContext));
    }
    return bytes;
  };
}

/** Fit of one estimate on the catalog GPUs, or on the one the user names. */
/**
 * Why the fit table gives no largest batch (a sentence the CLI, the hover and the panel show as it is): the step's tensors are given whole (a full-graph step), so the batch size
 * does not scale its memory. Undefined where the batch scales it.
 */
export function unscaledBatchReason(cfg: TrainingConfig): string | undefined {
  if (cfg.model.kind !== 'layers' || !cfg.model.wholeStep) return undefined;
  return t('No largest batch size: the step runs on the whole graph (every tensor it is given is made whole, with no batch axis), so the batch size does not change its memory.');
}

export function fitOnGpus(cfg: TrainingConfig, result: EstimateNumbers, gpuName?: string): GpuFit[] {
  let gpus: GpuModel[] = GPU_CATALOG;
  if (gpuName) {
    const gpu = findGpu(gpuName);
    gpus = gpu ? [gpu] : [];
  }
  const footprint = batchFootprint(cfg);
  const unscaled = unscaledBatchReason(cfg);
  return gpus.map((gpu) => ({
    gpu: gpu.name,
    capacity: gpu.capacity,
    fits: result.peakReserved + result.cudaContext <= gpu.capacity,
    maxBatchSize: unscaled ? null : maxBatchSize(cfg, gpu.capacity, footprint),
    ...(unscaled ? { noMaxBatchSize: unscaled } : {}),
  }));
}
