// Leaks in the figure: what one batch keeps alive when a finding (OOM101, OOM104) keeps a model output or a whole
// graph per batch, and after how many batches the chosen GPU runs out.
import type { KeptMemory } from '../engine/types';
import type { SemanticModel } from '../engine/semantic/model';
import { enclosingLoops, nodeAtPosition } from '../engine/syntax';
import type { ProgramModel } from '../engine/program/interpreter';
import type { PyNode } from '../engine/program/node';
import { numberOf, type Value } from '../engine/program/values';
import { activationMode, estimate, layerNetAt } from './model';
import { transformerActivations } from './transformer';
import type { TrainingConfig } from './types';

/** Bytes one batch keeps alive in a leak: an inference forward's graph, or the model's output (logits). */
export function keptBytes(base: TrainingConfig, keeps: KeptMemory, batchSize?: number): number | undefined {
  const config = batchSize !== undefined ? { ...base, batchSize } : base;
  if (keeps === 'graph') {
    // Without no_grad the estimator keeps two graphs alive (the previous batch's until its outputs are rebound).
    return estimate({ ...config, mode: 'infer-grad', checkpointing: false, graphFreedOnReturn: false }).breakdown.activations / 2;
  }
  const spec = config.model;
  const mode = activationMode(config);
  if (keeps.startsWith('module:')) {
    // A forward hook's kept output: the named module's output, in the activations' dtype.
    const elements = spec.kind === 'layers' ? layerNetAt(spec, config).namedOutputElementsPerSample?.[keeps.slice('module:'.length)] : undefined;
    return elements ? config.batchSize * elements * (mode === 'fp32' ? 4 : 2) : undefined;
  }
  const part = /^output\[(\d+)\]$/.exec(keeps);
  if (part) {
    // One element of a custom net's returned tuple, in its own precision (softmax's map stays fp32 under autocast).
    const kept = spec.kind === 'layers' ? spec.outputPartsPerSample?.[Number(part[1])] : undefined;
    if (!kept || kept.elements <= 0) return undefined;
    return config.batchSize * kept.elements * (mode === 'fp32' || (mode === 'amp' && kept.fullPrecision) ? 4 : 2);
  }
  if (spec.kind === 'transformer') {
    const outputs = transformerActivations(spec, {
      mode, training: true, attention: config.attention, batch: config.batchSize, seqLen: config.seqLen, imageSize: config.imageSize,
      frozenBase: Boolean(config.lora) || (config.frozenFraction ?? 0) > 0.5, loraTargets: new Set(config.lora?.targetModules ?? []),
    }, false).outputs;
    return outputs > 0 ? outputs : undefined;
  }
  return config.batchSize * layerNetAt(spec, config).outputElementsPerSample * (mode === 'fp32' ? 4 : 2);
}

/** The `growth` of `oomguard estimate --json` (cli.md): the largest per-batch leak and when it fills the GPU. */
export interface Growth {
  bytesPerBatch: number;
  /** 1-based line of the finding (or the append) that keeps it. */
  line: number;
  /** Batches until the GPU of the first fit entry is full (null without a GPU to check). */
  batchesUntilFull: number | null;
  /** The batches the leaking loop runs, where the script fixes them (a `break` at a count, a dataset of known length). */
  batches?: number;
  /**
   * What the loop holds once those batches have run, on top of the step's peak (the measured peak comes after
   * the loop): the batches' kept memory, twice where the kept list is concatenated after the loop.
   */
  keptAfterBatches?: number;
  /**
   * Where the leaking loop runs no backward (an evaluation after training): what is allocated beside what it keeps
   * (weights, the gradients backward left, optimizer states), in place of the step's peak, whose activations are
   * freed by then. The loop's end then holds about this plus keptAfterBatches.
   */
  heldBeside?: number;
}

/** A leak with its size: 0-based line, bytes kept per batch, and the batches its loop runs where the script fixes them. */
export interface SizedLeak {
  line: number;
  bytes: number;
  batches?: number;
  /** The kept tensors are copied once more at the end (`torch.cat` of the list): held this many times then. */
  copies?: number;
  /** The loops around the leak run no backward: the training step's activations are not alive beside it. */
  outsideStep?: boolean;
}

/**
 * Whether a leak the analysis reports at `position` lies in loops none of which runs backward (an evaluation loop,
 * also one a training function's caller runs after it).
 */
export function leakOutsideStep(model: SemanticModel, position: { line: number; character: number }): boolean {
  const loops = enclosingLoops(nodeAtPosition(model.root, position));
  return loops.length > 0 && !loops.some((loop) => model.runsBackward(loop));
}

/**
 * What stays allocated after the training steps: the weights, the optimizer's states, and the gradients backward
 * leaves unless every loop frees them after its step (zero_grad after optimizer.step()).
 */
export function persistentBytes(result: { breakdown: { weights: number; optimizerStates: number }; gradientsAfterBackward: number;
  config: Pick<TrainingConfig, 'gradientsFreedAfterSteps'> }): number {
  const gradients = result.config.gradientsFreedAfterSteps ? 0 : result.gradientsAfterBackward;
  return result.breakdown.weights + gradients + result.breakdown.optimizerStates;
}

/** The outputs a configuration's batch loops keep without a graph (TrainingConfig.keptOutputs), as sized leaks. */
export function keptOutputLeaks(config: TrainingConfig): SizedLeak[] {
  return (config.keptOutputs ?? []).flatMap((site) => {
    const bytes = keptBytes(config, 'output', site.batchSize);
    return bytes ? [{ line: site.line, bytes, ...(site.batches !== undefined ? { batches: site.batches } : {}), copies: site.concatenated ? 2 : 1 }] : [];
  });
}

/**
 * The growth of a script: the largest of its sized leaks (the rules' findings, `leaks`, and the outputs the
 * configuration's loops keep) against the room one step leaves on a GPU.
 */
export function growthOf(leaks: readonly SizedLeak[], config: TrainingConfig, stepTotal: number, capacity: number | undefined, persistent?: number): Growth | undefined {
  const worst = [...leaks, ...keptOutputLeaks(config)].reduce<SizedLeak | undefined>((best, leak) => (!best || leak.bytes > best.bytes ? leak : best), undefined);
  if (!worst || worst.bytes <= 0) return undefined;
  const room = capacity === undefined ? undefined : capacity - stepTotal;
  return {
    bytesPerBatch: Math.round(worst.bytes),
    line: worst.line + 1,
    batchesUntilFull: room === undefined ? null : Math.max(0, Math.floor(room / worst.bytes)),
    ...(worst.batches !== undefined ? { batches: worst.batches, keptAfterBatches: Math.round(worst.bytes * worst.batches * (worst.copies ?? 1)) } : {}),
    ...(worst.outsideStep && persistent !== undefined ? { heldBeside: Math.round(persistent) } : {}),
  };
}

/** Wrappers around a loader that keep its batches: `enumerate(loader)`, `tqdm(loader)`, `zip(loader, ...)`. */
const PASS_THROUGH = /^(enumerate|iter|zip|tqdm|tqdm\.tqdm|tqdm\.auto\.tqdm|track|progress_bar)$/;

/** The expression a loop takes its batches from, through `enumerate(...)`/`tqdm(...)`/`zip(...)`, and its value. */
export function loopLoader(program: ProgramModel, loop: PyNode | undefined): { node: PyNode | null; value: Value | undefined } {
  let iterable = loop?.childForFieldName('right') ?? null;
  while (iterable?.type === 'call' && PASS_THROUGH.test(iterable.childForFieldName('function')?.text ?? '')) {
    iterable = iterable.childForFieldName('arguments')?.namedChildren.find((a) => a && a.type !== 'keyword_argument' && a.type !== 'comment') ?? null;
  }
  return { node: iterable, value: program.valueOf(iterable) };
}

/**
 * The batch size of the loader a loop iterates, when the program model knows it (an evaluation loader often
 * batches differently from the training one).
 */
export function loopBatchSize(program: ProgramModel, loop: PyNode | undefined): number | undefined {
  const { value } = loopLoader(program, loop);
  if (value?.kind !== 'call' || !/(^|\.)DataLoader$/.test(value.path)) return undefined;
  const batch = numberOf(value.kwargs.get('batch_size') ?? value.args[1]);
  return batch !== undefined && batch > 0 ? batch : undefined;
}
