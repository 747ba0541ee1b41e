// The script behind a traceback frame: where it is on this machine, what the estimator says about one step of it,
// what the rules find in it, and which single tensors of a step are large enough to be "the" failed allocation.
import * as path from 'node:path';
import { host } from '../host';
import { analyze, MAX_ANALYZED_CHARACTERS, type AnalysisOptions } from '../engine/analyze';
import { parsePython } from '../engine/parser';
import { recoverTree } from '../engine/recovery';
import { SemanticModel } from '../engine/semantic/model';
import type { Finding } from '../engine/types';
import { estimateScript, type EstimateResult } from '../estimator/index';
import type { PyTree } from '../engine/program/node';
import { tokensPerSample } from '../estimator/transformer';
import { audioFrames } from '../estimator/speech';
import type { TrainingConfig } from '../estimator/types';
import { t } from '../l10n';

/** A single tensor of one step, with the shape its size was computed from. */
export interface StepTensor {
  name: string;
  /** The product that gives its size, e.g. "8 × 1024 × 50257 × 2 bytes". */
  formula: string;
  bytes: number;
}

export interface ScriptContext {
  file: string;
  estimate: EstimateResult;
  findings: Finding[];
  /** The step's largest single tensors, largest first. */
  tensors: StepTensor[];
}

/**
 * Finds a traceback's file on this machine: as printed, then relative to each root (the log's folder, the
 * workspace folders, the working directory), then by its trailing path components under each root, since a log
 * from a cluster names paths of another machine.
 */
export function resolveFrameFile(file: string, roots: string[]): string | undefined {
  const isFile = (candidate: string) => host().isLocalFile(candidate);
  if (path.isAbsolute(file) && isFile(file)) return file;
  const parts = file.split(/[\\/]+/).filter((part) => part.length > 0 && part !== '.');
  for (const root of roots) {
    for (let i = 0; i < parts.length; i++) {
      const candidate = path.join(root, ...parts.slice(i));
      if (isFile(candidate)) return candidate;
    }
  }
  return undefined;
}

/** The sizes of the step's largest single tensors, from the configuration the estimator detected. */
export function stepTensors(config: TrainingConfig): StepTensor[] {
  const act = config.precision === 'fp32' ? 4 : 2;
  const b = config.batchSize;
  const tensors: StepTensor[] = [];
  const add = (name: string, factors: number[], bytes: number) => {
    tensors.push({ name, formula: `${factors.join(' × ')} × ${t('{0} bytes', bytes)}`, bytes: factors.reduce((p, f) => p * f, bytes) });
  };
  const spec = config.model;
  if (spec.kind === 'transformer') {
    const seq = tokensPerSample(spec, config.seqLen, config.imageSize);
    const vocabHead = spec.task === 'causal-lm' || spec.task === 'masked-lm' || spec.task === 'seq2seq' || spec.task === 'speech-seq2seq';
    if (vocabHead) {
      add(t('logits (batch × sequence × vocabulary)'), [b, seq, spec.vocab], act);
      // The loss upcasts half-precision logits to fp32 before log_softmax.
      if (act !== 4) add(t('fp32 copy of the logits for the loss'), [b, seq, spec.vocab], 4);
    }
    // SDPA and FlashAttention never materialize the scores (they are computed tile by tile): only eager attention has
    // a batch × heads × sequence² tensor that a failed request could be.
    if (config.attention === 'eager') add(t('attention scores of one layer (batch × heads × sequence × sequence)'), [b, spec.heads, seq, seq], act);
    add(t('MLP activation of one layer (batch × sequence × intermediate)'), [b, seq, spec.intermediate], act);
    // Wav2Vec2: the feature encoder's first convolution makes its channels at a fifth of the waveform's samples.
    const firstConvolution = spec.audio ? audioFrames({ ...spec.audio, convKernels: spec.audio.convKernels.slice(0, 1) }, config.seqLen) : 0;
    if (spec.audio) add(t('output of the feature encoder\'s first convolution (batch × channels × frames)'), [b, spec.audio.convDims[0] ?? 512, firstConvolution], act);
  } else {
    const net = config.rebuildAt ? config.rebuildAt(config.imageSize) : spec;
    if (net.largestElementsPerSample > 0) add(t('largest activation (batch × elements per sample)'), [b, net.largestElementsPerSample], act);
    if (net.outputElementsPerSample > 0) add(t('network output (batch × elements per sample)'), [b, net.outputElementsPerSample], act);
  }
  return tensors.sort((x, y) => y.bytes - x.bytes);
}

/**
 * Estimate, findings and step tensors of a script whose semantic model the caller already holds.
 * `analysisText` is the text the tree was parsed from (a recovered parse may differ from the source mid-edit).
 */
export function scriptContextFromModel(tree: PyTree, model: SemanticModel, analysisText: string, sourceText: string, file: string, options: AnalysisOptions = {}): ScriptContext {
  const estimate = estimateScript(tree, analysisText, file);
  const findings = analyze(model, sourceText, options);
  return { file, estimate, findings, tensors: stepTensors(estimate.config) };
}

/** Reads, parses and analyses a script from disk (the CLI, or a file not open in the editor). */
export async function scriptContextFromFile(file: string, options: AnalysisOptions = {}): Promise<ScriptContext | undefined> {
  // Undefined where the file cannot be read, or there is no local disk (a browser: only open scripts are read).
  const text = host().readLocalFile(file);
  if (text === undefined) return undefined;
  // Binary files and files too large to analyse are left out rather than half-read.
  if (text.includes('\u0000') || text.length > MAX_ANALYZED_CHARACTERS) return undefined;
  const tree = await parsePython(text);
  if (!tree) return undefined;
  const recovered = await recoverTree(text, tree);
  try {
    const model = new SemanticModel(recovered.tree, recovered.text);
    const estimate = estimateScript(tree, text, file);
    const findings = analyze(model, text, options);
    return { file, estimate, findings, tensors: stepTensors(estimate.config) };
  } finally {
    if (recovered.tree !== tree) recovered.tree.delete();
    tree.delete();
  }
}
