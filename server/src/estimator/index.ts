// Public API of the memory estimator: detect the configuration of a script, fill what is missing with stated
// assumptions, apply the user's overrides, estimate, and check the fit on catalog GPUs.
// Lines in EstimateResult are 1-based (as the CLI prints them); the library keeps 0-based lines internally.
import { formatBytes } from '../engine/bytes';
import type { PyTree as Tree } from '../engine/program/node';
import type { Tree as ParserTree } from '../engine/parser';
import { copyTree } from '../engine/syntax-tree';
import type { Growth } from './growth';
import { t } from '../l10n';
import { findGpu } from './catalog/gpus';
import { detectConfig, type DetectedConfig } from './detect';
import { activationMode, estimate, fitOnGpus } from './model';
import { ACTIVATION_SHOWN, DEFAULT_DERIVATIVE_ACTIVATION, derivativeKeptRatio, HIGHEST_DERIVATIVE_ORDER } from './derivative-graphs';
import { vggFeatures } from './catalog/vision';
import { featureEncoderParameters } from './speech';
import { keptRows, type KeptGraphs } from './kept-graphs';
import { countTransformerParameters, type ActivationMode } from './transformer';
import type {
  Breakdown, ConfigField, GpuFit, LayerNetSpec, OptimizerKind, PeakPhase, Precision, RunMode, Strategy, TrainingConfig, WeightDtype,
} from './types';

export type { TrainingConfig, Precision, OptimizerKind, Strategy, GpuFit, Breakdown } from './types';
export { detectConfig } from './detect';
export { estimate, fitOnGpus, maxBatchSize, unscaledBatchReason } from './model';
export { MAX_BATCH_SIZE, maxBatchSizeText } from './types';
export { findGpu, GPU_CATALOG } from './catalog/gpus';
export { findCatalogModel, MODEL_CATALOG } from './catalog/models';
export { VISION_CATALOG, findVisionModel } from './catalog/vision';

/** Values the user sets from the command line or the panel; each replaces what was detected. */
export interface EstimateOverrides {
  batchSize?: number;
  seqLen?: number;
  imageSize?: number;
  precision?: Precision;
  optimizer?: OptimizerKind;
  checkpointing?: boolean;
  accumulation?: number;
  gpus?: number;
  strategy?: Strategy;
  /** Restrict the fit check to one catalog GPU. */
  gpu?: string;
  /** The model's parameter count, for a model the script does not let the estimator read (`--params 1.2e9`). */
  params?: number;
}

export interface LocatedJson<T> {
  value: T;
  /** 1-based line, or null when assumed or overridden. */
  line: number | null;
  /** How it was found: literal, argparse-default, config, call-argument, loop, environment, catalog, assumed, option. */
  how: string;
}

/** The `oomguard estimate --json` object (spec/cli.md), plus a few extra detected fields. */
export interface EstimateJson {
  file: string;
  detected: {
    /** `how`: how the model's name was found, where the script names it by a value (an argparse default, a config entry). */
    model: { name: string | null; source: string; line: number | null; how?: string; reason?: string };
    parameters: number;
    trainableParameters: number;
    batchSize: LocatedJson<number>;
    seqLen: LocatedJson<number> | null;
    /** An encoder-decoder's decoder length, where it differs from seqLen (the targets', as the step gives them). */
    targetLen?: LocatedJson<number>;
    imageSize: LocatedJson<number> | null;
    precision: LocatedJson<Precision>;
    weightDtype: LocatedJson<WeightDtype>;
    optimizer: LocatedJson<OptimizerKind>;
    checkpointing: boolean;
    accumulation: number;
    mode: LocatedJson<RunMode>;
    attention: string;
    lora: { rank: number; targetModules: string[]; dropout?: number; line: number | null } | null;
    gpus: number;
    strategy: Strategy;
  };
  breakdown: Breakdown | null;
  peakAllocated: number | null;
  peakReserved: number | null;
  cudaContext: number;
  peakPhase: PeakPhase;
  fits: GpuFit[];
  assumptions: string[];
  /** A leak's growth per batch (OOM101/OOM104 with a size), when the script has one (cli.md). */
  growth?: Growth;
}

export interface EstimateResult extends Omit<EstimateJson, 'breakdown' | 'peakAllocated' | 'peakReserved'> {
  breakdown: Breakdown;
  peakAllocated: number;
  peakReserved: number;
  /** All gradients per GPU once backward is done (EstimateNumbers); not part of the CLI's JSON. */
  gradientsAfterBackward: number;
  /** The configuration the numbers were computed for; give it to estimateFromConfig for what-if values. */
  config: TrainingConfig;
  /**
   * The script builds a model the estimator could not read: the figures that depend on it are not given (the
   * numbers above are those of a model without parameters, for the parts that do not depend on it).
   */
  unresolved?: { line: number | null; reason: string };
}

/** Strips the configuration, leaving exactly the JSON the CLI prints; an unresolved model has no peak and no fit. */
export function toEstimateJson(result: EstimateResult): EstimateJson {
  const { config, unresolved, gradientsAfterBackward, ...json } = result;
  void config;
  void gradientsAfterBackward;
  if (!unresolved) return json;
  return {
    ...json,
    detected: { ...json.detected, model: { name: null, source: 'unresolved', line: unresolved.line === null ? null : unresolved.line + 1, reason: unresolved.reason } },
    breakdown: null, peakAllocated: null, peakReserved: null, fits: [],
  };
}

/** A model known only by its parameter count (`--params`): persistent state only, activations not counted. */
function parameterOnlySpec(parameters: number): LayerNetSpec {
  return {
    kind: 'layers', parameters, savedElementsPerSample: 0, fixedBytesPerSample: 0, largestElementsPerSample: 0, outputElementsPerSample: 0,
    hasConvolution: false, inferenceLiveElementsPerSample: 0, blockSavedElements: [], blockInputElements: [], castParameters: parameters,
    input: { kind: 'vector', features: 1 }, scalesWithInput: false,
  };
}

const LORA_DEFAULT_TARGETS: Record<string, string[]> = {
  llama: ['q_proj', 'v_proj'], gemma: ['q_proj', 'v_proj'], opt: ['q_proj', 'v_proj'], phi: ['q_proj', 'v_proj'],
  gpt2: ['c_attn'], bert: ['query', 'value'], distilbert: ['q_lin', 'v_lin'], deberta: ['query_proj', 'value_proj'], t5: ['q', 'v'],
  vit: ['query', 'value'], clip: ['q_proj', 'v_proj'], whisper: ['q_proj', 'v_proj'],
};

/** What a torchvision detector's estimate rests on: the transform's resize, and the counts its code bounds. */
function detectorAssumptions(d: NonNullable<DetectedConfig['detector']>['value'], mode: RunMode): string[] {
  if (d.fixedSize !== undefined) return singleShotAssumptions(d, d.fixedSize, mode);
  const notes = [d.leastHeight !== undefined && d.leastWidth !== undefined
    ? t('{0} resizes each image, drawn from {1}..{2} x {3}..{4} px, on its own (GeneralizedRCNNTransform: min_size {5}, max_size {6}), and pads the batch to its tallest and widest: up to {7}x{8}, where a batch holds images of both extreme shapes; the backbone, the FPN levels and the anchors follow that size',
      d.name, d.leastHeight, d.height, d.leastWidth, d.width, d.minSize, d.maxSize, d.paddedHeight, d.paddedWidth)
    : t('{0} resizes the {1}x{2} images to {3}x{4} and pads the batch to {5}x{6} (GeneralizedRCNNTransform: min_size {7}, max_size {8}); the backbone, the FPN levels and the anchors follow that size',
      d.name, d.height, d.width, d.resizedHeight, d.resizedWidth, d.paddedHeight, d.paddedWidth, d.minSize, d.maxSize)];
  const twoStage = d.head !== 'retinanet' && d.head !== 'fcos';
  if (mode === 'train' && twoStage) {
    notes.push(t('training: the box head pools the 512 proposals an image the sampler draws'));
    if (d.head !== 'faster-rcnn') {
      notes.push(d.pretrained
        ? t('training: the mask or keypoint head is counted at 128 positive proposals an image, the sampler\'s most; it is fewer where fewer proposals overlap a box (a data-dependent count)')
        : t('training: with random weights the positive proposals are about the ground-truth boxes (the sampler adds them); the mask or keypoint head is counted at 16 an image (measured: 11 for 8 boxes), more boxes an image cost more'));
    }
  } else if (mode === 'train') {
    notes.push(d.head === 'fcos'
      ? t('training: the focal loss keeps ten tensors of every location\'s class scores')
      : t('training: the focal loss keeps ten tensors of every anchor\'s class scores, image by image'));
  } else if (twoStage) {
    notes.push(t('evaluation: the box head pools 1000 proposals an image'));
    if (d.head !== 'faster-rcnn') {
      notes.push(d.detections
        ? t('evaluation: the mask or keypoint head is counted at 100 detections an image (box_detections_per_img); fewer pass the score threshold on some images')
        : t('evaluation: with random weights every class scores about 1/num_classes, under box_score_thresh (0.05), so no detection reaches the mask or keypoint head'));
    }
  }
  if (d.frozenNorms && mode === 'train') {
    const stages = d.name.includes('mobilenet') ? 6 : 5;
    notes.push(d.trainableLayers === 0
      ? t('pretrained backbone: its FrozenBatchNorm2d layers keep nothing for backward, and trainable_backbone_layers=0 freezes the whole backbone: it records nothing')
      : d.trainableLayers !== undefined && d.trainableLayers < stages
        ? t('pretrained backbone: its FrozenBatchNorm2d layers keep nothing for backward, and only its top {0} stages train (trainable_backbone_layers): the stages below are frozen and record nothing', d.trainableLayers)
        : t('pretrained backbone: its FrozenBatchNorm2d layers keep nothing for backward'));
  }
  return notes;
}

/** SSD and SSDlite: a fixed input size, a loss and a post-processing over every anchor (catalog/detection.ts). */
function singleShotAssumptions(d: NonNullable<DetectedConfig['detector']>['value'], size: number, mode: RunMode): string[] {
  const notes = [d.imagesAssumed
    ? t('{0} resizes every image to {1}x{1} (fixed_size), so what the network keeps does not follow the images\' size; the script does not size its images: they are counted at {1}x{1}', d.name, size)
    : t('{0} resizes the {1}x{2} images to {3}x{3} (fixed_size): what the network keeps does not follow the images\' size, only the images themselves do', d.name, d.height, d.width, size)];
  notes.push(mode === 'train'
    ? t('training: the classification loss keeps the fp32 log-softmax of every anchor\'s class scores; hard negative mining sorts every anchor\'s loss')
    : t('evaluation: every anchor\'s class scores and their softmax are held beside the feature maps; top-k per class and NMS run image by image'));
  const stages = d.head === 'ssd' ? 5 : 6;
  if (mode === 'train' && d.trainableLayers !== undefined && d.trainableLayers < stages) {
    notes.push(t('pretrained backbone: only its top {0} of {1} stages train (trainable_backbone_layers): the stages below are frozen and record nothing', d.trainableLayers, stages));
  }
  return notes;
}

/** A waveform model's input when the script gives no length: 10 seconds at 16 kHz. */
const ASSUMED_WAVEFORM_SAMPLES = 160_000;

/** Builds the full configuration from what was detected, listing each assumption it had to make. */
export function configFromDetection(detected: DetectedConfig, assumptions: string[], parameters?: number): TrainingConfig {
  const lines: Partial<Record<ConfigField, number>> = {};
  const note = (field: ConfigField, line: number | undefined): void => {
    if (line !== undefined) lines[field] = line;
  };
  let model = detected.model;
  let unresolved: TrainingConfig['unresolved'];
  if (!model) {
    // Never another model in its place: what is missing is said, and asked for.
    const line = detected.unresolved?.line;
    if (parameters !== undefined) {
      model = { name: t('{0} parameters (given)', formatCount(parameters)), source: 'params', line: line ?? -1, spec: parameterOnlySpec(parameters), defaultWeightDtype: 'fp32' };
      assumptions.push(t('the model could not be read; its parameter count was given, so activations are not counted'));
    } else {
      unresolved = { line: line ?? null, reason: detected.unresolved?.reason ?? t('no model construction found in the script') };
      model = { name: '', source: 'unresolved', line: line ?? -1, spec: parameterOnlySpec(0), defaultWeightDtype: 'fp32' };
      assumptions.push(t('the model could not be read ({0}): give its parameter count with --params for an estimate', unresolved.reason));
    }
  } else {
    note('model', model.line);
  }
  if (model.spec.kind === 'layers' && model.spec.forwardUntraced) {
    // Never a silent figure: a forward the engine cannot follow leaves the activations to the layer walk.
    assumptions.push(model.spec.savedElementsPerSample > 0
      ? t('forward() of {0} could not be followed with shaped tensors: its activations are counted from its layers in the order they are built, without functional operations, skips or reshapes', model.name)
      : t('forward() of {0} could not be followed with shaped tensors, and its layers alone give no activations: activations are not counted, so the peak is too low and the largest batch too high', model.name));
  }
  if (model.spec.kind === 'layers' && model.spec.unmodelledOps && !model.spec.forwardUntraced) {
    // Never counted as 0 in silence: an op the trace does not know passes its input's shape on and keeps nothing.
    assumptions.push(t('operations in forward() not modelled, their outputs taken at their input\'s shape and what they keep not counted: {0}', model.spec.unmodelledOps.join(', ')));
  }
  for (const { line, argument } of detected.unreadArgumentLists ?? []) {
    // Never a default in silence where the script hands parse_args a list of its own.
    assumptions.push(argument === undefined
      ? t('parse_args (line {0}) is given an argument list the script does not determine: the argparse defaults are used', line + 1)
      : t('parse_args (line {0}) is given an argument list whose "{1}" could not be read: the argparse defaults are used', line + 1, argument));
  }
  if (detected.unknownLayers && detected.unknownLayers.length > 0) {
    assumptions.push(t('layer types not modelled, their parameters and activations not counted: {0}', detected.unknownLayers.join(', ')));
  }
  const packed = model.spec.kind === 'layers' ? model.spec.packedLengths : undefined;
  if (detected.packedSequences !== undefined && packed) {
    assumptions.push(t('sequences are packed (line {0}): the recurrent layers run over the real tokens only, counted at the mean length of lengths drawn from {1} to {2} ({3} tokens a sample); the padded tensors at the longest, {4}', detected.packedSequences + 1, packed.least, packed.most, Math.round(packed.mean), packed.padded));
  } else if (detected.packedSequences !== undefined) {
    assumptions.push(t('sequences are packed (line {0}): the recurrent layers are counted at the padded length for every sample, an upper bound where the lengths vary (packed, they run over the real tokens only)', detected.packedSequences + 1));
  }
  for (const drawn of model.spec.kind === 'layers' ? model.spec.drawnArguments ?? [] : []) {
    assumptions.push(t('forward() is given a number drawn from {0} to {1} (line {2}), such as a count of steps to unroll: counted at {1}, the most it can be', drawn.least, drawn.most, drawn.line + 1));
  }
  if (detected.foldedInput) {
    const { value, line, rowsPerSample } = detected.foldedInput;
    assumptions.push(rowsPerSample.length > 0 ? t('the model is called on {0} (line {1}), which folds other axes into its rows: one batch sample makes {2} rows, found by running the step\'s code at its sizes', value, (line ?? 0) + 1, rowsPerSample.join(' / '))
      : t('the model is called on {0} (line {1}), which folds other axes into its rows: each batch sample makes an unknown number of rows, counted as one (an underestimate); give --batch-size the rows one step feeds the model', value, (line ?? 0) + 1));
  }
  if (detected.recomputedLossChunk && detected.mode.value === 'train') {
    assumptions.push(t('the loss is computed in chunks under checkpoint() (line {0}): one chunk\'s logits ({1} values) at a time, made again and differentiated in backward; the model\'s own layers keep what they keep', (detected.recomputedLossChunk.line ?? 0) + 1, detected.recomputedLossChunk.value));
  }
  if (detected.savedOnHost !== undefined && detected.mode.value === 'train') {
    assumptions.push(t('save_on_cpu() (line {0}): what autograd saves for backward is copied to host memory and brought back one operation at a time in backward; the GPU keeps the outputs the step holds, and the largest operation\'s saved tensors and gradients at once', detected.savedOnHost + 1));
  }
  if (detected.cudnnBenchmark !== undefined) {
    // Measured on an H200 (test/gpu/estimator/results/round3.json): ResNet-18 and ResNet-50 steps took 2.8 to 8.4 GiB
    // more in the first step only. The search takes what is free and backs off: with the allocator capped at 6.3, 8.4
    // and 11.2 GiB, a first step that wants 13.4 GiB peaked at the cap and ran (results/benchmark_cap.json). So it
    // never decides whether a run fits, and the estimate is the steady peak.
    assumptions.push(t('cudnn.benchmark = True (line {0}): the first step tries convolution algorithms in whatever memory is free (2.8 to 8.4 GiB more for ResNet-18/50 on an H200) and takes less where less is free, without running out (measured with 6.3 GiB available); the estimate and the fit are for the later steps', detected.cudnnBenchmark + 1));
  }
  const spec = model.spec;
  const isText = spec.kind === 'transformer' ? spec.family !== 'vit' : spec.input.kind === 'tokens';
  const isImage = spec.kind === 'transformer' ? (spec.family === 'vit' && !spec.spectrogram) || spec.family === 'clip' : spec.input.kind === 'image';

  const how: TrainingConfig['how'] = { ...(detected.model?.nameHow ? { model: detected.model.nameHow } : {}), batchSize: detected.batchSize?.how, seqLen: detected.seqLen?.how, targetLen: detected.targetLen?.how, imageSize: detected.imageSize?.how };
  let batchSize = detected.batchSize?.value;
  note('batchSize', detected.batchSize?.line);
  if (batchSize === undefined) {
    batchSize = detected.usesTrainer ? 8 : isText ? 8 : 32;
    assumptions.push(detected.usesTrainer
      ? t('batch size not found in the script; assumed {0} (TrainingArguments default)', batchSize)
      : t('batch size not found in the script; assumed {0}', batchSize));
  }

  const maxPositions = spec.kind === 'transformer' ? spec.maxPositions : 512;
  // Runs of a hub model at token lengths of their own (a retriever's queries and passages through one encoder) the
  // step's data gives: counted at the longest, as the share of its batches their tokens make (activations follow
  // the tokens; see forwardBatches), from the step's call of the model.
  const runs = detected.forwards;
  const runLengths = spec.kind === 'transformer' && runs?.why === 'wrapper' && runs.lengths && new Set(runs.lengths).size > 1 ? runs.lengths : undefined;
  let seqLen = runLengths ? Math.max(...runLengths) : detected.seqLen?.value;
  note('seqLen', runLengths ? runs?.line : detected.seqLen?.line);
  if (runLengths) how.seqLen = 'literal';
  if (seqLen === undefined && spec.kind === 'transformer' && spec.audio) {
    seqLen = ASSUMED_WAVEFORM_SAMPLES;
    assumptions.push(t('the waveform\'s length was not found in the script; assumed {0} samples (10 s at 16 kHz)', seqLen));
  } else if (seqLen === undefined) {
    seqLen = Math.min(maxPositions, 1024);
    if (isText) {
      assumptions.push(seqLen === maxPositions
        ? t('seq_len not found in the script; assumed {0} (the model\'s maximum)', seqLen)
        : t('seq_len not found in the script; assumed {0} (the model allows {1})', seqLen, maxPositions));
    }
  }
  // A multiple-choice model flattens each sample's choices into its batch: so many sequences a sample.
  const multipleChoice = spec.kind === 'transformer' && spec.multipleChoice;
  const sequencesPerSample = multipleChoice ? detected.choices?.value ?? 1 : 1;
  if (multipleChoice && detected.choices) {
    assumptions.push(t('multiple choice: each sample holds {0} choices (line {1}), which the model runs as sequences of their own: {0} sequences of {2} tokens a sample', detected.choices.value, (detected.choices.line ?? 0) + 1, seqLen));
  } else if (multipleChoice) {
    assumptions.push(t('multiple choice: the choices each sample holds were not found in the data the step receives: counted as one sequence a sample (an underestimate); give --batch-size the sequences one step feeds the model'));
  }
  // The decoder of a text encoder-decoder reads the labels; the targets' own length when the script gives one. A
  // net of the script's own takes the length its trace gave the target tokens (the data's, `tgt[:, :-1]` applied).
  const targetLen = spec.kind === 'layers' ? spec.targetTokens
    : spec.task === 'seq2seq' && detected.targetLen && detected.targetLen.value !== seqLen ? detected.targetLen.value : undefined;
  if (targetLen !== undefined && detected.targetLen?.value === targetLen) note('targetLen', detected.targetLen.line);
  let imageSize = detected.imageSize?.value;
  note('imageSize', detected.imageSize?.line);
  if (imageSize === undefined) {
    imageSize = spec.kind === 'transformer' ? spec.imageSize ?? spec.vision?.imageSize ?? 224 : spec.input.kind === 'image' ? spec.input.size : 224;
    // A net traced on the inputs the step makes (a GAN's waveforms and spectrograms) takes no assumed size.
    if (isImage && !(spec.kind === 'layers' && spec.inputFromData)) assumptions.push(t('image size not found in the script; assumed {0}x{0}', imageSize));
  }

  let weightDtype = detected.weightDtype?.value;
  note('weightDtype', detected.weightDtype?.line);
  if (weightDtype === undefined) {
    weightDtype = model.defaultWeightDtype;
    if (weightDtype !== 'fp32') {
      assumptions.push(t('no dtype given to from_pretrained; weights load in the checkpoint\'s {0} (transformers 5 behaviour; transformers 4 loaded fp32)', weightDtype));
    }
  }
  let precision: Precision;
  if (detected.autocast) {
    precision = detected.autocast.value === 'bf16' ? 'bf16-amp' : 'fp16-amp';
    note('precision', detected.autocast.line);
  } else if (weightDtype !== 'fp32') {
    precision = weightDtype === 'bf16' ? 'bf16' : 'fp16';
    note('precision', detected.weightDtype?.line ?? (model.line >= 0 ? model.line : undefined));
  } else {
    precision = 'fp32';
  }

  const mode = detected.mode.value;
  note('mode', detected.mode.line);
  if (detected.mode.line === undefined) assumptions.push(t('no backward() or Trainer found; estimated as inference that still records gradients (no torch.no_grad)'));

  let optimizer = detected.optimizer?.value;
  note('optimizer', detected.optimizer?.line);
  if (optimizer === undefined) {
    optimizer = 'adamw';
    if (mode === 'train' && detected.unmodelledOptimizer) {
      assumptions.push(t('the states of optimizer {0} are not modelled; assumed those of {1}', detected.unmodelledOptimizer.value, 'AdamW'));
    } else if (mode === 'train' && !detected.usesTrainer) assumptions.push(t('optimizer not found in the script; assumed {0}', 'AdamW'));
  }
  const optimizerImpl = detected.optimizerImpl ?? (detected.usesTrainer ? 'fused' : 'foreach');

  let lora: TrainingConfig['lora'];
  if (detected.lora && spec.kind === 'transformer') {
    const targets = detected.lora.value.targetModules.length > 0 ? detected.lora.value.targetModules : LORA_DEFAULT_TARGETS[spec.family] ?? ['q_proj', 'v_proj'];
    if (detected.lora.value.targetModules.length === 0) assumptions.push(t('LoRA target_modules not given; assumed PEFT\'s default for this model ({0})', targets.join(', ')));
    lora = { rank: detected.lora.value.rank, targetModules: targets, dropout: detected.lora.value.dropout,
      ...(detected.lora.value.parametrized ? { parametrized: true } : {}) };
    note('lora', detected.lora.line);
  }
  // Optimizers given tensors of the script's (an optimised image) hold none of the model's parameters.
  const optimizedTensors = mode === 'train' && !lora ? detected.optimizedTensors : undefined;
  if (optimizedTensors) {
    assumptions.push(detected.frozen
      ? t('the optimizer (line {0}) trains a tensor of the script\'s ({1} elements), not the model\'s parameters: the tensor gets gradients and optimizer states; the frozen model keeps what backward needs to reach it', optimizedTensors.optimizerLine + 1, formatCount(optimizedTensors.elements))
      : t('the optimizer (line {0}) trains a tensor of the script\'s ({1} elements), not the model\'s parameters: the tensor gets gradients and optimizer states; the model\'s parameters, which still require grad, get gradients but no states', optimizedTensors.optimizerLine + 1, formatCount(optimizedTensors.elements)));
  }
  const optimizerParameters = optimizedTensors ? 0 : mode === 'train' && !lora ? detected.optimizerParameters?.value : undefined;
  if (optimizerParameters !== undefined && !optimizedTensors) {
    assumptions.push(t('the optimizer (line {0}) holds {1} of the {2} parameters: states for those alone, while every parameter that requires grad still gets a gradient (freeze the rest with requires_grad_(False) to save those too)',
      (detected.optimizerParameters?.line ?? 0) + 1, optimizerParameters.toLocaleString('en-US'), (spec.kind === 'layers' ? spec.parameters : countTransformerParameters(spec).total).toLocaleString('en-US')));
  }
  const sparseAdamParameters = mode === 'train' && detected.sparseAdamBeside !== undefined && spec.kind === 'layers' ? spec.sparseGradientParameters ?? 0 : 0;
  if (sparseAdamParameters > 0) {
    assumptions.push(t('SparseAdam (line {0}) holds the sparse embeddings (it takes sparse gradients only): two dense states for each of their {1} parameters; the other optimizer\'s states cover the rest',
      (detected.sparseAdamBeside ?? 0) + 1, sparseAdamParameters.toLocaleString('en-US')));
  }
  const masterCopies = mode === 'train' && detected.masterCopies !== undefined;
  if (masterCopies) {
    assumptions.push(t('the optimizer (line {0}) updates fp32 copies of the {1} parameters: those master weights, their fp32 gradients and the optimizer\'s fp32 states are counted beside the model\'s own weights and gradients',
      (detected.masterCopies ?? 0) + 1, weightDtype));
  }
  let frozenFraction: number | undefined;
  if (detected.frozen?.exact !== undefined && !lora) {
    frozenFraction = detected.frozen.exact;
  } else if (detected.frozen && optimizedTensors) {
    // What the script freezes beside an optimised tensor is the network it runs through.
    frozenFraction = 1;
  } else if (detected.frozen && !lora) {
    frozenFraction = FROZEN_FRACTION_ASSUMED;
    assumptions.push(t('the script freezes parameters; assumed {0}% of them frozen', Math.round(FROZEN_FRACTION_ASSUMED * 100)));
  }

  if (detected.featureEncoderFrozen !== undefined && spec.kind === 'transformer' && spec.audio?.frozen) {
    assumptions.push(t('the feature encoder is frozen (line {0}): its {1} parameters get no gradients or optimizer states and its convolutions keep nothing for backward; its first layer\'s output, alive at once with its norm\'s, is counted in forward', detected.featureEncoderFrozen + 1, formatCount(featureEncoderParameters(spec.audio))));
  }
  if (detected.detector) assumptions.push(...detectorAssumptions(detected.detector.value, mode));
  if (detected.rectangularImage && imageSize === detected.imageSize?.value && isImage) {
    const { height, width } = detected.rectangularImage.value;
    assumptions.push(t('the images are {0}x{1}: counted as {2}x{2}, a square of the same area (activations follow the area)', height, width, imageSize));
  }
  if (detected.imageRerun) {
    const { batch, imageSize } = detected.imageRerun.value;
    assumptions.push(t('the training loop runs first on batches of {0} images of {1}x{1}, then again from line {2} on batches with more pixels: the estimate is for that run',
      batch, imageSize, (detected.imageRerun.line ?? 0) + 1));
  }
  if (detected.batchRerun) {
    assumptions.push(t('the training loop runs first with batch size {0}, then again with a loader rebuilt at line {1}: the estimate is for the larger batch', detected.batchRerun.value, (detected.batchRerun.line ?? 0) + 1));
  }
  if (detected.videoFrames?.assumed) {
    assumptions.push(t('the clips\' length was not found in the script; assumed {0} frames', detected.videoFrames.value));
  }
  if (detected.flowUpdates?.assumed) {
    assumptions.push(t('the model\'s call gives no num_flow_updates: forward\'s default of {0} iterations assumed, each keeping its own tensors for backward', detected.flowUpdates.value));
  }
  if (detected.sparseAdjacency) {
    const { line, nonzeros, bytes } = detected.sparseAdjacency;
    assumptions.push(t('a sparse adjacency of {0} nonzeros (line {1}) stays on the GPU through every step: {2} counted', formatCount(nonzeros), line + 1, formatBytes(bytes)));
  }
  if (detected.residentData) {
    assumptions.push(t('tensors made on the GPU and held by an object of the script (line {0}: a rollout or replay buffer) stay through every step: {1} counted', (detected.residentData.line ?? 0) + 1, formatBytes(detected.residentData.value)));
  }
  if (detected.cropList) {
    const { crops, images, size, tokens } = detected.cropList.value;
    const sizes = [...new Set(crops.map((c) => `${c.height}x${c.width}`))].join(', ');
    assumptions.push(tokens
      ? t('the model is given {0} image batches of {1} px in one call (line {2}): counted as {3} images of {4} px, the same tokens', crops.length, sizes, (detected.cropList.line ?? 0) + 1, images, size)
      : t('the model is given {0} image batches of {1} px in one call (line {2}): counted as {3} images of {4} px, the same pixels', crops.length, sizes, (detected.cropList.line ?? 0) + 1, images, size));
  }
  if (detected.libraryWrapped) {
    const { wrapper, library, others } = detected.libraryWrapped.value;
    assumptions.push(t('{0} (line {1}) holds {2} beside modules of its own ({3}): only {2} is counted; their parameters and activations are not', wrapper, (detected.libraryWrapped.line ?? 0) + 1, library, others.join(', ')));
  }
  if (detected.moduleBuffers) {
    assumptions.push(t('buffers the script\'s modules register (line {0}: a static cache, a table) stay on the GPU at the size they are made: {1} counted', (detected.moduleBuffers.line ?? 0) + 1, formatBytes(detected.moduleBuffers.value)));
  }
  if (detected.residentCopies) {
    assumptions.push(t('a copy of the model (line {0}: an EMA model, a snapshot of the best weights) stays on the GPU: its weights are counted once more, without gradients or optimizer states', (detected.residentCopies.line ?? 0) + 1));
    if (detected.residentCopies.forwardUnderNoGrad !== undefined && mode === 'train') {
      assumptions.push(t('the copy runs a forward under no_grad (line {0}) after the model\'s: it keeps nothing, but what it holds while it runs comes on top of the activations the model\'s forward keeps', detected.residentCopies.forwardUnderNoGrad + 1));
    }
  }
  if (detected.sequentialPhases) {
    assumptions.push(t('the script trains {0} one after the other, each by an optimizer of its own: the estimate is of the phase of the largest, {1} (line {2}), with the weights of the models trained before it', detected.sequentialPhases.value.join(', '), detected.model?.name ?? '', (detected.sequentialPhases.line ?? 0) + 1));
    const unsized = detected.sequentialPhases.unsized;
    if (unsized) assumptions.push(t('{0} is not in the catalog: its phase is not compared with the others, nor are its weights counted', unsized.join(', ')));
  }
  // A model no optimizer updates (a frozen teacher): its weights, in units of the trained model's, beside the copies.
  const modelParameters = spec.kind === 'layers' ? spec.parameters : countTransformerParameters(spec).total;
  const untrainedCopies = detected.untrainedModel && modelParameters > 0 ? detected.untrainedModel.value.parameters / modelParameters : 0;
  if (detected.untrainedModel && untrainedCopies > 0) {
    assumptions.push(t('{0} (line {1}) is on the GPU but no optimizer updates it: its weights are counted, without gradients or optimizer states; its forward under no_grad keeps no activations', detected.untrainedModel.value.name, (detected.untrainedModel.line ?? 0) + 1));
  }
  const lossNetwork = detected.lossNetwork && mode === 'train' ? lossNetworkConfig(detected.lossNetwork, imageSize, activationMode({ precision, weightDtype }), assumptions) : undefined;
  const jointTower = jointTowerConfig(detected, assumptions);
  if (detected.ensemble) {
    const { value: members, line, originalsOnDevice } = detected.ensemble;
    assumptions.push(originalsOnDevice
      ? t('an ensemble of {0} members stacked by torch.func (line {1}): their stacked parameters are trained, and each step runs every member over its batch; the {0} original members stay on the GPU beside the stacked copies, their weights counted once more', members, (line ?? 0) + 1)
      : t('an ensemble of {0} members stacked by torch.func (line {1}): their stacked parameters are trained, and each step runs every member over its batch', members, (line ?? 0) + 1));
  }
  const modelCopies = (detected.residentCopies?.value ?? 0) + untrainedCopies + (detected.ensemble?.originalsOnDevice ? 1 : 0);
  const forwards = detected.forwards;
  const accumulation = detected.accumulation?.value ?? 1;
  note('accumulation', detected.accumulation?.line);
  const checkpointing = detected.checkpointing?.value ?? false;
  note('checkpointing', detected.checkpointing?.line);
  note('attention', detected.attention?.line);
  note('strategy', detected.strategy?.line);
  let forwardBatches = forwards?.batches ?? 1;
  if (runLengths && forwards && mode === 'train') {
    forwardBatches = (forwards.batches / forwards.forwards) * runLengths.reduce((sum, length) => sum + length, 0) / seqLen;
    assumptions.push(t('the model runs {0} times before one backward (line {1}), on {2} tokens: counted at {3} tokens, as {4} of its batches (activations follow the tokens)',
      forwards.forwards, (forwards.line ?? 0) + 1, runLengths.join(' + '), seqLen, forwardBatches.toFixed(2)));
  } else if ((forwards?.why === 'calls' || forwards?.why === 'wrapper') && mode === 'train') {
    assumptions.push(t('the model is called {0} times before one backward (line {1}): the activations of all {0} forwards are kept until it runs', forwards.forwards, (forwards.line ?? 0) + 1));
  }
  const keptGraphs = forwards?.graphs && mode === 'train' ? keptGraphsConfig(forwards.graphs, forwards.line, batchSize, assumptions) : undefined;
  // A derivative through one of several models trained together grows that model's share only (see derivativeModel).
  const penalised = detected.inputDerivatives && mode === 'train' && !(forwards && forwards.batches > 1) ? detected.derivativeModel : undefined;
  if (detected.inputDerivatives && penalised) {
    assumptions.push(t('derivatives of order up to {0} are taken with create_graph=True (line {1}) through a forward of {2}, which runs {4} times into that backward: their graphs are kept with that forward\'s (one forward of {2} saves {3}% of what one of each model does) until backward, and backward runs through them too; sized from MLPs measured on the GPU, with the activations {2} calls', detected.inputDerivatives.value, (detected.inputDerivatives.line ?? 0) + 1, penalised.name, Math.round(penalised.share * 100), penalised.forwards));
  } else if (detected.inputDerivatives && mode === 'train') {
    assumptions.push(t('derivatives of order up to {0} are taken with create_graph=True (line {1}): their graphs are kept with the forward\'s until backward, and backward runs through them too; sized from MLPs measured on the GPU, for the forward the script trains (a gradient penalty on one of several forwards is counted on all of them)', detected.inputDerivatives.value, (detected.inputDerivatives.line ?? 0) + 1));
  }
  if (detected.inputDerivatives && mode === 'train') {
    const order = Math.min(detected.inputDerivatives.value, HIGHEST_DERIVATIVE_ORDER);
    const activation = detected.derivativeActivation ?? DEFAULT_DERIVATIVE_ACTIVATION;
    const ratio = Math.round(derivativeKeptRatio(activation, order) * 100) / 100;
    assumptions.push(detected.derivativeActivation
      ? t('the derivatives\' graphs are sized by what {0} saves for them, layer by layer: with the forward\'s, {1} x what the forward alone keeps', ACTIVATION_SHOWN[activation], ratio)
      : t('no activation the derivatives go through is named in the script: their graphs are sized as {0}\'s, {1} x what the forward alone keeps', ACTIVATION_SHOWN[activation], ratio));
  }
  if (detected.perSampleGradients && mode === 'train') {
    assumptions.push(detected.perSampleGradients.value
      ? t('per-sample gradients (vmap over grad, line {0}): every parameter\'s gradient for each of the batch\'s samples, and the previous step\'s beside them while the next are computed (the loop rebinds their name only after the call returns)', detected.perSampleGradients.line! + 1)
      : t('per-sample gradients (vmap over grad, line {0}): every parameter\'s gradient for each of the batch\'s samples', detected.perSampleGradients.line! + 1));
  }
  if (detected.zeroGradMissing && mode === 'train') assumptions.push(t('no zero_grad() found: gradients stay alive through the next forward'));
  if (detected.zeroGradKeepsBuffers !== undefined && mode === 'train') {
    assumptions.push(t('zero_grad(set_to_none=False) (line {0}) zeroes the gradients in place: they stay allocated through the next forward', detected.zeroGradKeepsBuffers + 1));
  }
  if (detected.zeroGradAfterForward !== undefined && mode === 'train') {
    assumptions.push(t('zero_grad() (line {0}) runs after the forward: the previous step\'s gradients stay alive during it (call it before the forward, or after optimizer.step(), to free them)', detected.zeroGradAfterForward + 1));
  }
  // generate() on a decoder-only model (max_length counts the prompt too) or on an encoder-decoder text model
  // (max_length counts the decoder's tokens only): the new tokens it is asked for.
  let generateNewTokens: number | undefined;
  const decoderOnly = spec.kind === 'transformer' && spec.task === 'causal-lm' && spec.decoderLayers === 0;
  const encoderDecoder = spec.kind === 'transformer' && spec.task === 'seq2seq' && spec.decoderLayers > 0;
  if (detected.generate && mode === 'infer-no-grad' && (decoderOnly || encoderDecoder)) {
    const asked = detected.generate.value;
    const prompt = decoderOnly ? seqLen : 0;
    generateNewTokens = asked.newTokens ?? (asked.maxLength !== undefined ? Math.max(0, asked.maxLength - prompt) : undefined);
    if (generateNewTokens === undefined) {
      // transformers' GenerationConfig default: max_length 20, prompt included.
      generateNewTokens = Math.max(0, 20 - prompt);
      assumptions.push(t('generate() is given no max_new_tokens or max_length; assumed the library default (max_length {0})', 20));
    }
    if (asked.beams !== undefined) {
      assumptions.push(t('generate() runs a beam search of {0} beams (line {1}): the caches and logits are those of {0} x the batch', asked.beams, (detected.generate.line ?? 0) + 1));
    } else if (asked.returnSequences !== undefined) {
      assumptions.push(t('generate() returns {0} sequences per prompt (line {1}): it expands the prompts to {0} x the batch before the first step, so the caches and logits are those of {0} x the batch', asked.returnSequences, (detected.generate.line ?? 0) + 1));
    }
  }
  // A decoding loop written by hand (prompt forward, then one token at a time with past_key_values).
  let decodingLoopTokens: number | undefined;
  if (detected.decodingLoop && !detected.generate && mode === 'infer-no-grad' && decoderOnly) {
    decodingLoopTokens = detected.decodingLoop.value ?? 0;
    assumptions.push(detected.decodingLoop.value !== undefined
      ? t('a decoding loop feeds {0} tokens one at a time with the cache (line {1}): the prompt\'s forward keeps the logits of every position beside the cache until the first step replaces its output, and the cache grows to the prompt plus {0}', detected.decodingLoop.value, (detected.decodingLoop.line ?? 0) + 1)
      : t('a decoding loop feeds tokens one at a time with the cache (line {0}), for a number of steps the script does not fix: the cache is counted at the prompt\'s length only (an underestimate for long generations)', (detected.decodingLoop.line ?? 0) + 1));
  }
  const strategy = detected.strategy?.value ?? 'ddp';
  const gpus = detected.gpus?.value ?? 1;
  const shardGradOp = strategy === 'fsdp' && detected.shardGradOp !== undefined;
  if (detected.strategy) assumptions.push(t('data parallelism ({0}) found; estimated per GPU for {1} GPU(s) (use --gpus)', strategy, gpus));
  if (shardGradOp) assumptions.push(t('FSDP SHARD_GRAD_OP (reshard_after_forward=False) found: each GPU keeps a whole copy of the weights from forward to the end of backward, on top of its shard'));

  return {
    modelName: model.name,
    modelSource: model.source,
    model: spec,
    rebuildAt: model.rebuildAt,
    ...(jointTower ? { jointTower } : {}),
    batchSize, seqLen, targetLen, imageSize, precision, weightDtype, optimizer, optimizerImpl, checkpointing, accumulation,
    ...(detected.optimizer && detected.optimizerStates !== undefined ? { optimizerStates: detected.optimizerStates } : {}),
    ...(optimizerParameters !== undefined ? { optimizerParameters } : {}),
    ...(optimizedTensors ? { optimizedTensorElements: optimizedTensors.elements } : {}),
    ...(masterCopies ? { masterCopies } : {}),
    ...(detected.sparseAdamBeside !== undefined && mode === 'train' ? { sparseAdamBeside: true } : {}),
    checkpointSegments: detected.checkpointSegments,
    ...(detected.checkpointSegmentCount !== undefined ? { checkpointSegmentCount: detected.checkpointSegmentCount } : {}),
    ...(detected.compiled ? { compiled: true } : {}),
    ...(detected.savedOnHost !== undefined ? { savedOnHost: true } : {}),
    gradsKeptAcrossSteps: detected.zeroGradMissing || (detected.zeroGradAfterForward !== undefined && mode === 'train') ||
      (detected.zeroGradKeepsBuffers !== undefined && mode === 'train'),
    ...(detected.gradientsFreedAfterSteps && mode === 'train' ? { gradientsFreedAfterSteps: true } : {}),
    outputKept: detected.output === undefined ? undefined : detected.output.value === 'kept',
    ...(detected.graphFreedOnReturn !== undefined ? { graphFreedOnReturn: true } : {}),
    ...(detected.outputObjectDropped !== undefined ? { outputObjectDropped: true } : {}),
    ...(detected.forwardsWithoutLabels !== undefined ? { lossAfterRebind: true } : {}),
    ...(detected.outputsUnscored !== undefined ? { outputsUnscored: true } : {}),
    ...(forwards && forwardBatches > 1 && mode === 'train' ? { forwardsPerBackward: forwardBatches } : {}),
    ...(sequencesPerSample > 1 ? { sequencesPerSample } : {}),
    ...(keptGraphs ? { keptGraphs } : {}),
    ...(detected.inputDerivatives && mode === 'train' ? { inputDerivativeOrder: detected.inputDerivatives.value } : {}),
    ...(detected.perSampleGradients && mode === 'train' ? { perSampleGradients: { keptAcrossSteps: detected.perSampleGradients.value } } : {}),
    ...(detected.inputDerivatives && detected.derivativeActivation && mode === 'train' ? { inputDerivativeActivation: detected.derivativeActivation } : {}),
    ...(penalised ? { inputDerivativeShare: penalised.share, inputDerivativeModelForwards: penalised.forwards } : {}),
    ...(generateNewTokens !== undefined ? { generateNewTokens } : {}),
    ...(decodingLoopTokens !== undefined ? { decodingLoopTokens } : {}),
    ...(generateNewTokens !== undefined && detected.generate?.value.beams !== undefined ? { generateBeams: detected.generate.value.beams } : {}),
    ...(detected.recomputedLossChunk && mode === 'train' ? { recomputedLossElements: detected.recomputedLossChunk.value } : {}),
    ...(generateNewTokens !== undefined && detected.generate?.value.beams === undefined && detected.generate?.value.returnSequences !== undefined
      ? { generateReturnSequences: detected.generate.value.returnSequences } : {}),
    // Decoder-only causal LMs return their KV cache unless the script turns use_cache off.
    kvCache: spec.kind === 'transformer' && spec.task === 'causal-lm' && spec.decoderLayers === 0 && !detected.useCacheOff,
    mode,
    attention: detected.attention?.value ?? 'sdpa',
    lora, frozenFraction, gpus, strategy, offloadOptimizer: false, lines,
    ...(detected.frozen?.lowerLayers && !lora ? { frozenLowerLayers: detected.frozen.lowerLayers } : {}),
    ...(modelCopies > 0 ? { modelCopies } : {}),
    ...(detected.residentCopies?.forwardUnderNoGrad !== undefined && mode === 'train' ? { copyForwardUnderNoGrad: true } : {}),
    ...(detected.keptOutputs ? { keptOutputs: detected.keptOutputs } : {}),
    ...(lossNetwork ? { lossNetwork } : {}),
    ...(detected.residentData || detected.moduleBuffers || detected.sparseAdjacency
      ? { residentDataBytes: (detected.residentData?.value ?? 0) + (detected.moduleBuffers?.value ?? 0) + (detected.sparseAdjacency?.bytes ?? 0) } : {}),
    // A wrapper found in the script holds its buffers even on one GPU (DDP's gradient buckets).
    dataParallel: detected.strategy !== undefined,
    shardGradOp,
    unresolved,
    how,
  };
}

/**
 * A perceptual loss's frozen VGG features, run on images of the data's size: fp32 weights, what its forward saves in
 * the activations' dtype (max-pool indices in int64), the image it reads among them (normalized or cast, a tensor of
 * its own), and under autocast the half copies of its weights its convolutions save (measured on the H200,
 * test/gpu/estimator/results/probe_under11.jsonl: vgg19.features[:36] at 384x384 keeps 130 MiB a sample and 38 MiB
 * of weight copies under bf16, 219 MiB a sample in fp32).
 */
function lossNetworkConfig(network: NonNullable<DetectedConfig['lossNetwork']>, imageSize: number, activations: ActivationMode,
  assumptions: string[]): TrainingConfig['lossNetwork'] {
  const { name, count } = network.value;
  const spec = vggFeatures(name, count, imageSize);
  if (!spec) return undefined;
  const elementBytes = activations === 'fp32' ? 4 : 2;
  const part = count !== undefined ? `${name}.features[:${count}]` : `${name}.features`;
  assumptions.push(t('{0} (line {1}) is frozen and run with grad on the model\'s output in the loss: its weights and what its forward saves on {2}x{2} images are counted ({3} per sample), its backward runs before the model\'s',
    part, (network.line ?? 0) + 1, imageSize, formatBytes(spec.savedElementsPerSample * elementBytes + spec.fixedBytesPerSample)));
  const image = 3 * imageSize ** 2;
  return {
    weightBytes: spec.parameters * 4,
    savedBytesPerSample: (image + spec.savedElementsPerSample) * elementBytes + spec.fixedBytesPerSample,
    savedBytes: activations === 'amp' ? spec.parameters * 2 : 0,
  };
}

/** What the step's loops of forwards keep, in units of the batch, and the assumptions that say how it was read. */
function keptGraphsConfig(graphs: KeptGraphs, line: number | undefined, batchSize: number, assumptions: string[]): TrainingConfig['keptGraphs'] {
  const figures = keptRows(graphs, batchSize);
  const kept = graphs.forwards.filter((forward) => forward.kept > 0);
  const runs = kept.reduce((sum, forward) => sum + forward.kept, 0);
  const rows = Math.round(figures.rows * batchSize);
  assumptions.push(t('{0} forwards (line {1}) run in loops before one backward and are all alive when it starts: {2} rows in all, {3} x the batch; its transients are those of one forward of {4} rows',
    runs, (line ?? 0) + 1, rows, formatRatio(figures.rows), Math.round(figures.largestRows * batchSize)));
  const secondOrder = kept.filter((forward) => forward.createGraph);
  if (secondOrder.length > 0) {
    assumptions.push(t('{0} of them are inner steps whose gradient over the fast weights is taken with create_graph=True (line {1}): each keeps what its gradient\'s backward saved too (the gradients of the outputs of its weighted layers, norms and smooth activations) and a copy of the weights',
      secondOrder.reduce((sum, forward) => sum + forward.kept, 0), secondOrder[0]!.line + 1));
  }
  const firstOrder = graphs.forwards.find((forward) => forward.firstOrder);
  if (firstOrder) {
    assumptions.push(t('the inner steps at line {0} take their gradient without create_graph (first order): each frees its graph at the gradient, and only its fast weights stay', firstOrder.line + 1));
  }
  if (graphs.unknownRuns) assumptions.push(t('a loop around those forwards runs a number of times the script does not fix: counted once'));
  return figures;
}

function formatRatio(ratio: number): string {
  return Number.isInteger(ratio) ? String(ratio) : ratio.toFixed(1);
}

/** The other tower of a two-tower model, at the images' size (else its own), and the assumption that says so. */
function jointTowerConfig(detected: DetectedConfig, assumptions: string[]): TrainingConfig['jointTower'] {
  const tower = detected.jointTower?.value;
  if (!tower || !detected.model) return undefined;
  const spec = tower.spec;
  const imageSize = detected.imageSize?.value ?? tower.nativeImageSize ?? (spec.kind === 'transformer' ? spec.imageSize ?? 224 : spec.input.kind === 'image' ? spec.input.size : 224);
  const line = (detected.jointTower!.line ?? 0) + 1;
  // A text model beside another (two hub models trained together) reads the same sequences, not images.
  const readsImages = spec.kind !== 'transformer' || spec.family === 'vit' || spec.family === 'clip';
  assumptions.push(readsImages
    ? t('{0} (line {1}) is trained in the same step as {2}: its weights, gradients, optimizer states and activations at {3}x{3} are counted beside it',
      tower.name, line, detected.model.name, imageSize)
    : t('{0} (line {1}) is trained in the same step as {2}: its weights, gradients, optimizer states and activations on the same sequences are counted beside it',
      tower.name, line, detected.model.name));
  return { name: tower.name, model: spec, imageSize, rebuildAt: tower.rebuildAt,
    ...(tower.checkpointing !== undefined ? { checkpointing: tower.checkpointing } : {}) };
}

function formatCount(parameters: number): string {
  return parameters >= 1e9 ? `${(parameters / 1e9).toFixed(2)}B` : `${(parameters / 1e6).toFixed(1)}M`;
}

/** Share of parameters taken as frozen when a script calls requires_grad_(False) without LoRA (backbone frozen, head trained). */
const FROZEN_FRACTION_ASSUMED = 0.95;

function applyOverrides(config: TrainingConfig, overrides: EstimateOverrides): TrainingConfig {
  const next: TrainingConfig = { ...config, lines: { ...config.lines }, how: { ...config.how } };
  const set = <K extends keyof EstimateOverrides & keyof TrainingConfig & ConfigField>(key: K): void => {
    const value = overrides[key];
    if (value === undefined) return;
    (next as unknown as Record<string, unknown>)[key] = value;
    delete next.lines[key];
    if (key === 'batchSize' || key === 'seqLen' || key === 'imageSize') next.how![key as 'batchSize' | 'seqLen' | 'imageSize'] = 'option';
  };
  set('batchSize');
  set('seqLen');
  set('imageSize');
  set('checkpointing');
  set('accumulation');
  set('strategy');
  if (overrides.strategy !== undefined) {
    // --strategy says the model is wrapped; its `fsdp` is FULL_SHARD (SHARD_GRAD_OP comes only from the script).
    next.dataParallel = true;
    next.shardGradOp = false;
  }
  if (overrides.gpus !== undefined) next.gpus = overrides.gpus;
  if (overrides.optimizer !== undefined) {
    next.optimizer = overrides.optimizer;
    delete next.optimizerStates;
    delete next.lines.optimizer;
  }
  if (overrides.precision !== undefined) {
    next.precision = overrides.precision;
    delete next.lines.precision;
    // Pure bf16/fp16 means the weights are cast; AMP keeps the weights as loaded.
    if (overrides.precision === 'bf16' || overrides.precision === 'fp16') next.weightDtype = overrides.precision;
    if (overrides.precision === 'fp32') next.weightDtype = 'fp32';
  }
  if (overrides.gpu !== undefined) next.gpuName = overrides.gpu;
  return next;
}

function located<T>(value: T, line: number | undefined, how?: string): LocatedJson<T> {
  const known = line !== undefined && line >= 0;
  return { value, line: known ? line + 1 : null, how: how ?? (known ? 'literal' : 'assumed') };
}

/** Recomputes the estimate for a configuration (the panel's what-if values), without detecting again. */
export function estimateFromConfig(config: TrainingConfig, overrides: EstimateOverrides = {}, file = '', assumptions: string[] = []): EstimateResult {
  const cfg = applyOverrides(config, overrides);
  const numbers = estimate(cfg);
  const fits = cfg.unresolved ? [] : fitOnGpus(cfg, numbers, cfg.gpuName);
  const notes = [...assumptions];
  if (cfg.gpuName && !findGpu(cfg.gpuName)) notes.push(t('GPU "{0}" is not in the catalog; no fit check', cfg.gpuName));
  // NCCL allocates its communication buffers outside PyTorch's caching allocator; no figure has been measured yet.
  if (cfg.gpus > 1) notes.push(t('NCCL communication buffers are not counted: they live outside PyTorch\'s allocator (nvidia-smi shows them, max_memory_allocated does not)'));
  const spec = cfg.model;
  const isText = spec.kind === 'transformer' ? spec.family !== 'vit' : spec.input.kind === 'tokens';
  const isImage = spec.kind === 'transformer' ? (spec.family === 'vit' && !spec.spectrogram) || spec.family === 'clip' : spec.input.kind === 'image';
  return {
    file,
    detected: {
      model: { name: cfg.modelName, source: cfg.modelSource, line: located(0, cfg.lines.model).line, ...(cfg.how?.model ? { how: cfg.how.model } : {}) },
      parameters: numbers.parameters,
      trainableParameters: numbers.trainableParameters,
      batchSize: located(cfg.batchSize, cfg.lines.batchSize, cfg.how?.batchSize),
      seqLen: isText ? located(cfg.seqLen, cfg.lines.seqLen, cfg.how?.seqLen) : null,
      ...(isText && cfg.targetLen !== undefined ? { targetLen: located(cfg.targetLen, cfg.lines.targetLen, cfg.lines.targetLen !== undefined ? cfg.how?.targetLen : undefined) } : {}),
      imageSize: isImage ? located(cfg.imageSize, cfg.lines.imageSize, cfg.how?.imageSize) : null,
      precision: located(cfg.precision, cfg.lines.precision),
      weightDtype: located(cfg.weightDtype, cfg.lines.weightDtype),
      optimizer: located(cfg.optimizer, cfg.lines.optimizer),
      checkpointing: cfg.checkpointing,
      accumulation: cfg.accumulation,
      mode: located(cfg.mode, cfg.lines.mode),
      attention: cfg.attention,
      lora: cfg.lora ? { ...cfg.lora, line: located(0, cfg.lines.lora).line } : null,
      gpus: cfg.gpus,
      strategy: cfg.strategy,
    },
    breakdown: numbers.breakdown,
    peakAllocated: numbers.peakAllocated,
    peakReserved: numbers.peakReserved,
    cudaContext: numbers.cudaContext,
    peakPhase: numbers.peakPhase,
    gradientsAfterBackward: numbers.gradientsAfterBackward,
    fits,
    assumptions: notes,
    config: cfg,
    unresolved: cfg.unresolved,
  };
}

/** Detects, assumes, overrides and estimates one script. `filePath` locates a config.json beside it. */
export function estimateScript(tree: Tree | ParserTree, text: string, filePath: string, overrides: EstimateOverrides = {}): EstimateResult {
  // The program model asks the tree many small questions: a tree-sitter tree (the CLI's parse) is read through
  // the engine's plain copy, as the server reads its documents, instead of one WebAssembly call per question.
  const plain: Tree = 'walk' in tree ? { rootNode: copyTree(tree, text) } : tree;
  const detected = detectConfig(plain, text, filePath);
  const assumptions: string[] = [];
  const config = configFromDetection(detected, assumptions, overrides.params);
  return estimateFromConfig(config, overrides, filePath, assumptions);
}
