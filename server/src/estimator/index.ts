// Public API of the memory estimator: detect the configuration of a script, fill what is missing with stated
// assumptions, apply the user's overrides, estimate, and check the fit on catalog GPUs.
// Lines in EstimateResult are 1-based (as the CLI prints them); the library keeps 0-based lines internally.
import type { PyTree as Tree } from './syntax';
import { t } from '../l10n';
import { findCatalogModel } from './catalog/models';
import { findGpu } from './catalog/gpus';
import { detectConfig, type DetectedConfig } from './detect';
import { estimate, fitOnGpus } from './model';
import type {
  Breakdown, ConfigField, GpuFit, OptimizerKind, PeakPhase, Precision, RunMode, Strategy, TrainingConfig, WeightDtype,
} from './types';

export type { TrainingConfig, Precision, OptimizerKind, Strategy, GpuFit, Breakdown } from './types';
export { detectConfig } from './detect';
export { estimate, fitOnGpus, maxBatchSize } from './model';
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
}

export interface LocatedJson<T> {
  value: T;
  /** 1-based line, or null when assumed or overridden. */
  line: number | null;
}

/** The `oomguard estimate --json` object (spec/cli.md), plus a few extra detected fields. */
export interface EstimateJson {
  file: string;
  detected: {
    model: { name: string; source: string; line: number | null };
    parameters: number;
    trainableParameters: number;
    batchSize: LocatedJson<number>;
    seqLen: LocatedJson<number> | null;
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
  breakdown: Breakdown;
  peakAllocated: number;
  peakReserved: number;
  cudaContext: number;
  peakPhase: PeakPhase;
  fits: GpuFit[];
  assumptions: string[];
}

export interface EstimateResult extends EstimateJson {
  /** The configuration the numbers were computed for; give it to estimateFromConfig for what-if values. */
  config: TrainingConfig;
}

/** Strips the configuration, leaving exactly the JSON the CLI prints. */
export function toEstimateJson(result: EstimateResult): EstimateJson {
  const { config, ...json } = result;
  void config;
  return json;
}

const LORA_DEFAULT_TARGETS: Record<string, string[]> = {
  llama: ['q_proj', 'v_proj'], gemma: ['q_proj', 'v_proj'], opt: ['q_proj', 'v_proj'], phi: ['q_proj', 'v_proj'],
  gpt2: ['c_attn'], bert: ['query', 'value'], distilbert: ['q_lin', 'v_lin'], deberta: ['query_proj', 'value_proj'], t5: ['q', 'v'],
  vit: ['query', 'value'], clip: ['q_proj', 'v_proj'], whisper: ['q_proj', 'v_proj'],
};

/** Builds the full configuration from what was detected, listing each assumption it had to make. */
export function configFromDetection(detected: DetectedConfig, assumptions: string[]): TrainingConfig {
  const lines: Partial<Record<ConfigField, number>> = {};
  const note = (field: ConfigField, line: number | undefined): void => {
    if (line !== undefined) lines[field] = line;
  };
  let model = detected.model;
  if (!model) {
    const fallback = findCatalogModel('gpt2');
    if (!fallback) throw new Error('catalog lacks gpt2');
    model = { name: 'gpt2', source: 'catalog', line: -1, spec: fallback.spec, defaultWeightDtype: 'fp32' };
    assumptions.push(t('No model found in the script; estimated for {0}', 'gpt2'));
  } else {
    note('model', model.line);
  }
  const spec = model.spec;
  const isText = spec.kind === 'transformer' ? spec.family !== 'vit' : spec.input.kind === 'tokens';
  const isImage = spec.kind === 'transformer' ? spec.family === 'vit' || spec.family === 'clip' : spec.input.kind === 'image';

  let batchSize = detected.batchSize?.value;
  note('batchSize', detected.batchSize?.line);
  if (batchSize === undefined) {
    batchSize = detected.usesTrainer ? 8 : isText ? 8 : 32;
    assumptions.push(detected.usesTrainer
      ? t('batch size not found in the script; assumed {0} (TrainingArguments default)', batchSize)
      : t('batch size not found in the script; assumed {0}', batchSize));
  }

  const maxPositions = spec.kind === 'transformer' ? spec.maxPositions : 512;
  let seqLen = detected.seqLen?.value;
  note('seqLen', detected.seqLen?.line);
  if (seqLen === undefined) {
    seqLen = Math.min(maxPositions, 1024);
    if (isText) {
      assumptions.push(seqLen === maxPositions
        ? t('seq_len not found in the script; assumed {0} (the model\'s maximum)', seqLen)
        : t('seq_len not found in the script; assumed {0} (the model allows {1})', seqLen, maxPositions));
    }
  }
  // The decoder of a text encoder-decoder reads the labels; the targets' own length when the script gives one.
  const targetLen = spec.kind === 'transformer' && spec.task === 'seq2seq' && detected.targetLen && detected.targetLen.value !== seqLen
    ? detected.targetLen.value : undefined;
  let imageSize = detected.imageSize?.value;
  note('imageSize', detected.imageSize?.line);
  if (imageSize === undefined) {
    imageSize = spec.kind === 'transformer' ? spec.imageSize ?? spec.vision?.imageSize ?? 224 : spec.input.kind === 'image' ? spec.input.size : 224;
    if (isImage) assumptions.push(t('image size not found in the script; assumed {0}x{0}', imageSize));
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
    if (mode === 'train' && !detected.usesTrainer) assumptions.push(t('optimizer not found in the script; assumed {0}', 'AdamW'));
  }
  const optimizerImpl = detected.optimizerImpl ?? (detected.usesTrainer ? 'fused' : 'foreach');

  let lora: TrainingConfig['lora'];
  if (detected.lora && spec.kind === 'transformer') {
    const targets = detected.lora.value.targetModules.length > 0 ? detected.lora.value.targetModules : LORA_DEFAULT_TARGETS[spec.family] ?? ['q_proj', 'v_proj'];
    if (detected.lora.value.targetModules.length === 0) assumptions.push(t('LoRA target_modules not given; assumed PEFT\'s default for this model ({0})', targets.join(', ')));
    lora = { rank: detected.lora.value.rank, targetModules: targets, dropout: detected.lora.value.dropout };
    note('lora', detected.lora.line);
  }
  let frozenFraction: number | undefined;
  if (detected.frozen && !lora) {
    frozenFraction = FROZEN_FRACTION_ASSUMED;
    assumptions.push(t('the script freezes parameters; assumed {0}% of them frozen', Math.round(FROZEN_FRACTION_ASSUMED * 100)));
  }

  const accumulation = detected.accumulation?.value ?? 1;
  note('accumulation', detected.accumulation?.line);
  const checkpointing = detected.checkpointing?.value ?? false;
  note('checkpointing', detected.checkpointing?.line);
  note('attention', detected.attention?.line);
  note('strategy', detected.strategy?.line);
  if (detected.zeroGradMissing && mode === 'train') assumptions.push(t('no zero_grad() found: gradients stay alive through the next forward'));
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
    batchSize, seqLen, targetLen, imageSize, precision, weightDtype, optimizer, optimizerImpl, checkpointing, accumulation,
    gradsKeptAcrossSteps: detected.zeroGradMissing,
    // Decoder-only causal LMs return their KV cache unless the script turns use_cache off.
    kvCache: spec.kind === 'transformer' && spec.task === 'causal-lm' && spec.decoderLayers === 0 && !detected.useCacheOff,
    mode,
    attention: detected.attention?.value ?? 'sdpa',
    lora, frozenFraction, gpus, strategy, offloadOptimizer: false, lines,
    // A wrapper found in the script holds its buffers even on one GPU (DDP's gradient buckets).
    dataParallel: detected.strategy !== undefined,
    shardGradOp,
  };
}

/** Share of parameters taken as frozen when a script calls requires_grad_(False) without LoRA (backbone frozen, head trained). */
const FROZEN_FRACTION_ASSUMED = 0.95;

function applyOverrides(config: TrainingConfig, overrides: EstimateOverrides): TrainingConfig {
  const next: TrainingConfig = { ...config, lines: { ...config.lines } };
  const set = <K extends keyof EstimateOverrides & keyof TrainingConfig & ConfigField>(key: K): void => {
    const value = overrides[key];
    if (value === undefined) return;
    (next as unknown as Record<string, unknown>)[key] = value;
    delete next.lines[key];
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

function located<T>(value: T, line: number | undefined): LocatedJson<T> {
  return { value, line: line === undefined || line < 0 ? null : line + 1 };
}

/** Recomputes the estimate for a configuration (the panel's what-if values), without detecting again. */
export function estimateFromConfig(config: TrainingConfig, overrides: EstimateOverrides = {}, file = '', assumptions: string[] = []): EstimateResult {
  const cfg = applyOverrides(config, overrides);
  const numbers = estimate(cfg);
  const fits = fitOnGpus(cfg, numbers, cfg.gpuName);
  const notes = [...assumptions];
  if (cfg.gpuName && !findGpu(cfg.gpuName)) notes.push(t('GPU "{0}" is not in the catalog; no fit check', cfg.gpuName));
  // NCCL allocates its communication buffers outside PyTorch's caching allocator; no figure has been measured yet.
  if (cfg.gpus > 1) notes.push(t('NCCL communication buffers are not counted: they live outside PyTorch\'s allocator (nvidia-smi shows them, max_memory_allocated does not)'));
  const spec = cfg.model;
  const isText = spec.kind === 'transformer' ? spec.family !== 'vit' : spec.input.kind === 'tokens';
  const isImage = spec.kind === 'transformer' ? spec.family === 'vit' || spec.family === 'clip' : spec.input.kind === 'image';
  return {
    file,
    detected: {
      model: { name: cfg.modelName, source: cfg.modelSource, line: located(0, cfg.lines.model).line },
      parameters: numbers.parameters,
      trainableParameters: numbers.trainableParameters,
      batchSize: located(cfg.batchSize, cfg.lines.batchSize),
      seqLen: isText ? located(cfg.seqLen, cfg.lines.seqLen) : null,
      imageSize: isImage ? located(cfg.imageSize, cfg.lines.imageSize) : null,
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
    fits,
    assumptions: notes,
    config: cfg,
  };
}

/** Detects, assumes, overrides and estimates one script. `filePath` locates a config.json beside it. */
export function estimateScript(tree: Tree, text: string, filePath: string, overrides: EstimateOverrides = {}): EstimateResult {
  const detected = detectConfig(tree, text, filePath);
  const assumptions: string[] = [];
  const config = configFromDetection(detected, assumptions);
  return estimateFromConfig(config, overrides, filePath, assumptions);
}
