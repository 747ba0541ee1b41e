// Maps the configurations of gpu-truth (measure.py's families, precisions and optimizers) onto TrainingConfig,
// so that tests and the benchmark run the estimator on exactly what was measured.
import { findCatalogModel } from './catalog/models';
import { findVisionModel } from './catalog/vision';
import type { OptimizerImpl, OptimizerKind, Precision, RunMode, TrainingConfig, TransformerSpec, WeightDtype } from './types';

/** One record of truth.json, the fields the estimator needs. */
export interface TruthRecord {
  id: string;
  kind: 'train' | 'infer' | 'leak';
  family: string;
  batch_size: number;
  seq_len: number | null;
  image_size: number | null;
  precision: 'fp32' | 'amp_fp16' | 'amp_bf16' | 'bf16';
  optimizer: string | null;
  grad_ckpt: boolean;
  grad_accum: number | null;
  mode?: string;
  variant?: string;
  attn_requested?: string;
  param_count?: number;
  peak_alloc?: number;
  peak_reserved?: number;
  error?: string | null;
}

const HF_FAMILIES: Record<string, { id: string; task: TransformerSpec['task']; labels: number }> = {
  gpt2: { id: 'gpt2', task: 'causal-lm', labels: 2 },
  gpt2_medium: { id: 'gpt2-medium', task: 'causal-lm', labels: 2 },
  bert_base: { id: 'bert-base-uncased', task: 'seq-cls', labels: 2 },
  bert_large: { id: 'bert-large-uncased', task: 'seq-cls', labels: 2 },
  distilbert: { id: 'distilbert-base-uncased', task: 'seq-cls', labels: 2 },
  llama_1b: { id: 'TinyLlama/TinyLlama-1.1B-Chat-v1.0', task: 'causal-lm', labels: 2 },
  vit_b16: { id: 'google/vit-base-patch16-224', task: 'image-cls', labels: 1000 },
};

const PRECISIONS: Record<TruthRecord['precision'], { precision: Precision; weights: WeightDtype }> = {
  fp32: { precision: 'fp32', weights: 'fp32' },
  amp_fp16: { precision: 'fp16-amp', weights: 'fp32' },
  amp_bf16: { precision: 'bf16-amp', weights: 'fp32' },
  bf16: { precision: 'bf16', weights: 'bf16' },
};

const OPTIMIZERS: Record<string, { optimizer: OptimizerKind; impl: OptimizerImpl }> = {
  sgd: { optimizer: 'sgd', impl: 'foreach' },
  sgd_momentum: { optimizer: 'sgd-momentum', impl: 'foreach' },
  adam: { optimizer: 'adam', impl: 'foreach' },
  adamw: { optimizer: 'adamw', impl: 'foreach' },
  adamw_fused: { optimizer: 'adamw', impl: 'fused' },
  adamw_forloop: { optimizer: 'adamw', impl: 'for-loop' },
};

/** Whether a record's peak is a per-step peak the estimator predicts (leak loops grow with the loop length instead). */
export function isPerStepPeak(r: TruthRecord): boolean {
  if (r.error || r.peak_alloc === undefined || r.peak_alloc === null) return false;
  if (r.kind === 'leak') return !String(r.variant).startsWith('eval_');
  if (r.kind === 'infer') return r.mode !== 'grad_tensor';
  return true;
}

export function configFromTruth(r: TruthRecord): TrainingConfig {
  const precision = PRECISIONS[r.precision];
  const optimizer = OPTIMIZERS[r.optimizer ?? 'adamw'] ?? OPTIMIZERS.adamw;
  let mode: RunMode = 'train';
  if (r.kind === 'infer') mode = r.mode === 'no_grad' ? 'infer-no-grad' : 'infer-grad';
  if (r.kind === 'leak' && String(r.variant).startsWith('eval_')) mode = r.variant === 'eval_append_nograd' ? 'infer-no-grad' : 'infer-grad';
  const base = {
    batchSize: r.batch_size,
    seqLen: r.seq_len ?? 512,
    imageSize: r.image_size ?? 224,
    precision: precision.precision,
    weightDtype: precision.weights,
    optimizer: optimizer.optimizer,
    optimizerImpl: optimizer.impl,
    checkpointing: Boolean(r.grad_ckpt),
    // truth-measure.py checkpoints the torchvision CNNs through checkpoint_sequential over their blocks.
    checkpointSegments: Boolean(r.grad_ckpt),
    accumulation: r.grad_accum ?? 1,
    gradsKeptAcrossSteps: r.variant === 'no_zero_grad',
    mode,
    attention: r.attn_requested === 'eager' ? 'eager' as const : 'sdpa' as const,
    gpus: 1,
    strategy: 'ddp' as const,
    offloadOptimizer: false,
    lines: {},
    modelSource: 'gpu-truth',
  };
  const hf = HF_FAMILIES[r.family];
  if (hf) {
    const entry = findCatalogModel(hf.id);
    if (!entry) throw new Error(`catalog lacks ${hf.id}`);
    return { ...base, modelName: hf.id, model: { ...entry.spec, task: hf.task, numLabels: hf.labels } };
  }
  const vision = findVisionModel(r.family);
  if (!vision) throw new Error(`no model for family ${r.family}`);
  const model = vision.build(base.imageSize, 1000);
  return {
    ...base,
    modelName: r.family,
    model,
    rebuildAt: model.kind === 'layers' ? (size: number) => vision.build(size, 1000) as typeof model : undefined,
  };
}

export interface ErrorStats {
  count: number;
  /** Median and 90th percentile of |estimate / measured - 1|. */
  medianAbs: number;
  p90Abs: number;
  /** Most negative estimate / measured - 1 (the worst underestimate), 0 when none is under. */
  worstUnder: number;
  worstOver: number;
}

/** Summary of relative errors (estimate / measured - 1). */
export function errorStats(errors: number[]): ErrorStats {
  const sorted = errors.map(Math.abs).sort((a, b) => a - b);
  const quantile = (q: number): number => {
    if (sorted.length === 0) return 0;
    const pos = (sorted.length - 1) * q;
    const lo = Math.floor(pos);
    const hi = Math.ceil(pos);
    return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
  };
  return {
    count: errors.length,
    medianAbs: quantile(0.5),
    p90Abs: quantile(0.9),
    worstUnder: Math.min(0, ...errors),
    worstOver: Math.max(0, ...errors),
  };
}

/**
 * The "parameters x 16 bytes" rule of thumb (accelerate estimate-memory style): weights, gradients and two Adam
 * moments in fp32, nothing for activations; fp16/bf16-only training counts 8 bytes, SGD 8 or 12.
 */
export function peerEstimate(parameters: number): number {
  return parameters * 16;
}
