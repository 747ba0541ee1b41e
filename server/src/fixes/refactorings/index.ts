// The refactorings offered on a training loop (code actions of kind refactor.rewrite): mixed precision, gradient
// checkpointing and gradient accumulation. `refactoringsAt` is plain engine code (the CLI and tests call it);
// code-actions.ts turns its results into LSP code actions (this module never imports the LSP library, so the CLI
// bundle does not carry it).
import type { SemanticModel } from '../../engine/semantic/model';
import type { Position } from '../../engine/types';
import { gradientAccumulation } from './accumulation';
import { bfloat16Amp, float16Amp } from './amp';
import { gradientCheckpointing } from './checkpointing';
import { detectedConfig, trainingLoopAt, weightsAreHalf } from './training-loop';
import { trainerRefactorings } from './trainer';
import type { Refactoring, RefactoringContext } from './training-loop';
import { configFromDetection, estimateFromConfig, type EstimateOverrides } from '../../estimator/index';
import { programOf } from '../../estimator/python-values';

export type { Refactoring } from './training-loop';

/** Every refactoring, in the order the editor lists them. */
const REFACTORINGS: Array<(context: RefactoringContext) => Refactoring[]> = [
  bfloat16Amp,
  float16Amp,
  gradientCheckpointing,
  gradientAccumulation,
];

/** A refactoring that saves less than this share of the estimated peak is not offered: it would change code for nothing. */
const MIN_SAVING = 0.05;

/**
 * What a refactoring would save at the peak, as the estimator reads the same script (the program model the
 * estimate uses); undefined where the estimate cannot say (a model it cannot read).
 */
function peaksOf(model: SemanticModel, text: string, title: string, filePath: string | undefined): { before: number; after: number } | undefined {
  const base = model.memo('refactoring-estimate', () => {
    try {
      const config = configFromDetection(detectedConfig(model, text, filePath), []);
      return config.unresolved ? undefined : { config, peak: estimateFromConfig(config).peakAllocated };
    } catch {
      return undefined;
    }
  });
  if (!base) return undefined;
  const overrides: EstimateOverrides = {};
  if (title.startsWith('Enable mixed precision (AMP, bfloat16)')) overrides.precision = 'bf16-amp';
  else if (title.startsWith('Enable mixed precision')) overrides.precision = 'fp16-amp';
  else if (title.startsWith('Enable gradient checkpointing')) overrides.checkpointing = true;
  else {
    const accumulation = /^Add gradient accumulation \((\d+) steps, micro-batch (\d+)/.exec(title);
    if (!accumulation) return undefined;
    overrides.accumulation = Number(accumulation[1]);
    overrides.batchSize = Number(accumulation[2]);
  }
  return { before: base.peak, after: estimateFromConfig(base.config, overrides).peakAllocated };
}

export interface RefactoringOptions {
  lineStarts?: readonly number[];
  /** Accumulation steps asked for (the CLI's `accumulation:K`) instead of the editor's choices. */
  accumulation?: number;
  /** The script's path on disk: config files it names (YAML, JSON) are read relative to it. */
  filePath?: string;
}

/**
 * The refactorings that apply to the training loop at `position` (none where the cursor is in no training loop),
 * and only where they save memory by the estimate.
 */
export function refactoringsAt(model: SemanticModel, text: string, position: Position, options: RefactoringOptions = {}): Refactoring[] {
  const loop = trainingLoopAt(model, text, position, options.lineStarts);
  const program = programOf({ rootNode: model.root }, options.filePath);
  // A Trainer script has no loop of its own: its TrainingArguments are what the refactorings edit.
  const offered = loop
    ? REFACTORINGS.flatMap((refactoring) => refactoring({ model, text, loop, program, filePath: options.filePath, accumulation: options.accumulation }))
    : trainerRefactorings(model, program, text, position, () => weightsAreHalf(model, text, options.filePath), options.accumulation);
  return offered.flatMap((refactoring) => {
    const peak = peaksOf(model, text, refactoring.title, options.filePath);
    if (!peak) return [refactoring];
    return (peak.before - peak.after) / peak.before >= MIN_SAVING ? [{ ...refactoring, peak }] : [];
  });
}
