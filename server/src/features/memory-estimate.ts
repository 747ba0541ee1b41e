// The memory estimate of one document version, shared by the estimate request, CodeLens, hovers and leak sizes.
// Detection runs once per version on the shared semantic model's tree; what-if values only recompute the numbers.
import { programOf } from '../estimator/python-values';
import { fileURLToPath } from 'node:url';
import type { DocumentState } from '../engine/documents';
import type { Node } from '../engine/parser';
import type { SemanticModel } from '../engine/semantic/model';
import { MAX_ANALYZED_CHARACTERS } from '../engine/analyze';
import { configFromDetection, detectConfig, estimateFromConfig, maxBatchSize, unscaledBatchReason, type EstimateResult } from '../estimator/index';
import { AUTO_GPU, CUSTOM_GPU, lookupGpu } from './gpu-target';
export { keptBytes } from '../estimator/growth';
import { growthOf, persistentBytes } from '../estimator/growth';
import { estimatedText } from '../estimator/leak-size-table';
import type { RunMode, TrainingConfig } from '../estimator/types';
import { formatBytes } from '../engine/bytes';
import { gradientAccumulation } from '../fixes/refactorings/accumulation';
import { bfloat16Amp } from '../fixes/refactorings/amp';
import { gradientCheckpointing } from '../fixes/refactorings/checkpointing';
import { trainingLoopAt } from '../fixes/refactorings/training-loop';
import { t } from '../l10n';
import { MINOR_SAVING_FRACTION } from '../protocol';
import type { EstimateInput, EstimateOverrides, EstimateResponse, MemorySuggestion } from '../protocol';
import type { ServerContext } from './context';

/** Where the training and inference loops start (0-based lines), for CodeLens and the refactorings. */
export interface LoopSites {
  training?: number;
  inference?: { line: number; noGrad: boolean };
}

export interface BaseEstimate {
  version: number;
  config: TrainingConfig;
  assumptions: string[];
  file: string;
  loops: LoopSites;
}

/** Keyed by the document's state object, which lives as long as the document is open; the version says if it is current. */
const cache = new WeakMap<DocumentState, BaseEstimate | EstimateError>();
/** What the cached estimate read: its version's text without comments (see estimatedText). */
const readTexts = new WeakMap<DocumentState, string>();

export function filePathOf(uri: string): string {
  try {
    return uri.startsWith('file:') ? fileURLToPath(uri) : '';
  } catch {
    return '';
  }
}

function findLoops(model: SemanticModel, config: TrainingConfig): LoopSites {
  const sites: LoopSites = {};
  for (const loop of model.loops) {
    if (!model.isPerBatchLoop(loop)) continue;
    const trains = model.runsBackward(loop) || model.stepsOptimizer(loop);
    if (trains) {
      sites.training ??= loop.startPosition.row;
      continue;
    }
    if (sites.inference) continue;
    const forward = model.callsWithin(loop).find((call) => model.isDirectForwardCall(call));
    if (forward) sites.inference = { line: loop.startPosition.row, noGrad: model.isNoGrad(forward) };
  }
  // A Trainer script has no loop of its own: the lens goes on trainer.train().
  if (sites.training === undefined && config.mode === 'train' && config.lines.mode !== undefined) sites.training = config.lines.mode;
  return sites;
}

/** No estimate for this version: why, and for a model the estimator could not read, where it is built. */
export interface EstimateError {
  version: number;
  error: string;
  unresolved?: { line: number | null; reason: string };
  /** For an unresolved model: the estimate once the user gives its parameter count (the panel's field, `--params`). */
  withParameters?: (params: number) => BaseEstimate;
}

/** The last configuration computed for the document, of whichever version: it never computes. */
export function latestEstimate(state: DocumentState): BaseEstimate | EstimateError | undefined {
  return cache.get(state);
}

/** The detected configuration of the document's current version, computed once per version. */
export function baseEstimate(context: ServerContext, state: DocumentState): BaseEstimate | EstimateError | undefined {
  const cached = cache.get(state);
  if (cached && cached.version === state.version) return cached;
  if (state.text.length > MAX_ANALYZED_CHARACTERS) {
    const tooLarge = { version: state.version, error: t('This file is too large to estimate.') };
    cache.set(state, tooLarge);
    return tooLarge;
  }
  const model = context.modelOf(state);
  if (!model) return undefined;
  const read = estimatedText(model.root, state.analysisText);
  if (cached && readTexts.get(state) === read) {
    const same = { ...cached, version: state.version };
    cache.set(state, same);
    return same;
  }
  readTexts.set(state, read);
  let entry: BaseEstimate | EstimateError;
  try {
    const file = filePathOf(state.uri);
    const detected = detectConfig({ rootNode: model.root }, state.analysisText, file);
    const assumptions: string[] = [];
    const config = configFromDetection(detected, assumptions);
    // A model the script builds in a way the estimator cannot read: say so, and show no figure, no fit.
    const withParameters = (params: number): BaseEstimate => {
      const given: string[] = [];
      const sized = configFromDetection(detected, given, params);
      return { version: state.version, config: sized, assumptions: given, file, loops: findLoops(model, sized) };
    };
    entry = config.unresolved
      ? { version: state.version, unresolved: config.unresolved, withParameters, error: config.unresolved.line === null
        ? t('No memory estimate: {0}.', config.unresolved.reason)
        : t('No memory estimate: the model on line {0} could not be read ({1}).', config.unresolved.line + 1, config.unresolved.reason) }
      : { version: state.version, config, assumptions, file, loops: findLoops(model, config) };
  } catch (error) {
    entry = { version: state.version, error: t('The memory estimate failed: {0}', error instanceof Error ? error.message : String(error)) };
  }
  cache.set(state, entry);
  return entry;
}

export function isBase(entry: BaseEstimate | { error: string } | undefined): entry is BaseEstimate {
  return !!entry && !('error' in entry);
}

/** The GPU to compare against: the what-if choice, else the setting; undefined names one neither the catalog nor `auto`/`custom` made. */
export function resolveGpu(name: string): { name: string; capacity: number } | undefined {
  const gpu = lookupGpu(name);
  return gpu ? { name: gpu.name, capacity: gpu.capacity } : undefined;
}

/** What nvidia-smi would show at the peak: what the caching allocator reserves plus the CUDA context. */
export function totalOf(result: Pick<EstimateResult, 'peakReserved' | 'cudaContext'>): number {
  return result.peakReserved + result.cudaContext;
}

/** Estimates with what-if values; the fit is checked on one GPU only, which keeps a request to a few milliseconds. */
export function estimateWith(base: BaseEstimate, overrides: EstimateOverrides, gpuName: string, config: TrainingConfig = base.config): EstimateResult {
  const gpu = lookupGpu(gpuName);
  const name = gpu?.name ?? gpuName;
  const result = estimateFromConfig(config, { ...overrides, gpu: name }, base.file, base.assumptions);
  if (gpu?.catalog || (!gpu && gpuName !== AUTO_GPU && gpuName !== CUSTOM_GPU)) return result;
  // A GPU that `auto` or `custom` chose is not in the estimator's catalog: its fit is checked here, by the same rule
  // (estimator/model.ts fitOnGpus). Without one, the setting's warning said why; the catalog note would mislead.
  const notInCatalog = t('GPU "{0}" is not in the catalog; no fit check', name);
  const assumptions = result.assumptions.filter((note) => note !== notInCatalog);
  if (!gpu) return { ...result, assumptions };
  const fits = totalOf(result) <= gpu.capacity;
  const unscaled = unscaledBatchReason(result.config);
  const fit = unscaled ? { maxBatchSize: null, noMaxBatchSize: unscaled } : { maxBatchSize: maxBatchSize(result.config, gpu.capacity) };
  return { ...result, assumptions, fits: [{ gpu: name, capacity: gpu.capacity, fits, ...fit }] };
}

/** The configuration of the inference loop: the same model and batch, without gradients or optimizer. */
export function inferenceConfig(base: BaseEstimate): TrainingConfig | undefined {
  const site = base.loops.inference;
  if (!site) return undefined;
  const mode: RunMode = site.noGrad ? 'infer-no-grad' : 'infer-grad';
  return { ...base.config, mode };
}

function inputsOf(result: EstimateResult, overrides: EstimateOverrides): EstimateInput[] {
  const d = result.detected;
  const line = (value: number | null) => (value === null ? null : value - 1);
  const origin = (key: keyof EstimateOverrides | 'model' | 'mode' | 'lora' | 'targetLen', at: number | null): EstimateInput['origin'] =>
    key in overrides ? 'overridden' : at === null ? 'assumed' : 'detected';
  const input = (key: EstimateInput['key'], label: string, value: string, at: number | null, overrideKey: keyof EstimateOverrides | 'model' | 'mode' | 'lora' | 'targetLen' = key as keyof EstimateOverrides): EstimateInput => ({
    key, label, value, line: line(at), origin: origin(overrideKey, at),
  });
  const config = result.config;
  const inputs: EstimateInput[] = [
    input('model', t('model'), `${d.model.name} (${d.model.source}, ${t('{0}M parameters', (d.parameters / 1e6).toFixed(1))})`, d.model.line, 'model'),
    input('batchSize', t('batch size'), String(d.batchSize.value), d.batchSize.line),
  ];
  if (d.seqLen) inputs.push(input('seqLen', t('sequence length'), String(d.seqLen.value), d.seqLen.line));
  // Shown, not a what-if control: the decoder's length follows the data the script gives it.
  if (d.targetLen) inputs.push(input('targetLen', t('target length'), String(d.targetLen.value), d.targetLen.line, 'targetLen'));
  if (d.imageSize) inputs.push(input('imageSize', t('image size'), String(d.imageSize.value), d.imageSize.line));
  inputs.push(
    input('precision', t('precision'), `${d.precision.value} (${t('weights {0}', d.weightDtype.value)})`, d.precision.line),
    input('optimizer', t('optimizer'), d.optimizer.value, d.optimizer.line),
    input('checkpointing', t('checkpointing'), d.checkpointing ? t('on') : t('off'), config.lines.checkpointing !== undefined ? config.lines.checkpointing + 1 : null),
    input('accumulation', t('accumulation steps'), String(d.accumulation), config.lines.accumulation !== undefined ? config.lines.accumulation + 1 : null),
    input('mode', t('mode'), d.mode.value, d.mode.line, 'mode'),
  );
  if (d.lora) inputs.push(input('lora', t('LoRA'), t('r={0} on {1}', d.lora.rank, d.lora.targetModules.join(', ')), d.lora.line, 'lora'));
  if (d.gpus > 1 || 'gpus' in overrides) inputs.push(input('strategy', t('data parallel'), `${d.strategy} x ${d.gpus}`, config.lines.strategy !== undefined ? config.lines.strategy + 1 : null));
  return inputs;
}

/** The refactorings (server/src/fixes/refactorings) that make a suggested change on the training loop, by title. */
export type RefactoringTitles = Partial<Record<'amp' | 'checkpointing' | 'accumulation', string>>;

/** The titles of a document's version, kept with the version and line they were made for. */
const titlesOfDocuments = new WeakMap<DocumentState, { version: number; model: SemanticModel; line: number | undefined; titles: RefactoringTitles }>();

/**
 * The refactorings' titles of the document's current version (`model` is its semantic model): made once per version,
 * not again for each what-if value the panel asks an estimate for (each refactoring reads the whole script: about a
 * third of an estimate request's time on a 1,000-line script).
 */
export function refactoringTitlesOf(state: DocumentState, model: SemanticModel, line: number | undefined): RefactoringTitles {
  const kept = titlesOfDocuments.get(state);
  if (kept && kept.version === state.version && kept.model === model && kept.line === line) return kept.titles;
  const titles = refactoringTitles(model, state.text, line, filePathOf(state.uri));
  titlesOfDocuments.set(state, { version: state.version, model, line, titles });
  return titles;
}

export function refactoringTitles(model: SemanticModel, text: string, line: number | undefined, filePath?: string): RefactoringTitles {
  if (line === undefined) return {};
  const loop = trainingLoopAt(model, text, { line, character: 0 });
  if (!loop) return {};
  const context = { model, text, loop, program: programOf({ rootNode: model.root }, filePath), filePath };
  return {
    amp: bfloat16Amp(context)[0]?.title,
    checkpointing: gradientCheckpointing(context)[0]?.title,
    accumulation: gradientAccumulation(context)[0]?.title,
  };
}

function suggestionsFor(base: BaseEstimate, result: EstimateResult, overrides: EstimateOverrides, gpuName: string, leaks: LeakSummary[], refactorings: RefactoringTitles): MemorySuggestion[] {
  const config = result.config;
  const total = totalOf(result);
  const out: MemorySuggestion[] = [];
  const loopLine = base.loops.training ?? config.lines.mode ?? 0;
  const consider = (id: MemorySuggestion['id'], change: EstimateOverrides, title: string, detail: string, refactoring?: string) => {
    const next = estimateWith(base, { ...overrides, ...change }, gpuName);
    const saving = total - totalOf(next);
    if (saving <= 0) return;
    out.push({ id, title, detail, saving, minor: saving < total * MINOR_SAVING_FRACTION, overrides: change, refactor: refactoring ? { kind: 'refactor.rewrite', line: loopLine, title: refactoring } : undefined });
  };
  if (config.mode === 'train') {
    if (config.precision === 'fp32') {
      consider('amp', { precision: 'bf16-amp' }, t('Train with bf16 autocast (AMP)'),
        t('Wrap the forward pass and loss in torch.autocast("cuda", dtype=torch.bfloat16); activations are kept in half precision.'), refactorings.amp);
    }
    if (!config.checkpointing) {
      consider('checkpointing', { checkpointing: true }, t('Turn on activation checkpointing'),
        t('Recompute activations in backward instead of keeping them (about one extra forward of compute).'), refactorings.checkpointing);
    }
    if (config.batchSize >= 2) {
      const half = Math.floor(config.batchSize / 2);
      const accumulation = config.accumulation * 2;
      consider('accumulation', { batchSize: half, accumulation }, t('Batch {0} with {1} accumulation steps', half, accumulation),
        t('Same effective batch ({0} samples per optimizer step), half the activations at a time. The refactoring adds the accumulation; halve the batch size yourself.', half * accumulation),
        config.accumulation === 1 ? refactorings.accumulation : undefined);
    }
  }
  const fit = result.fits[0];
  if (fit && !fit.fits && fit.maxBatchSize !== null) {
    consider('smaller-batch', { batchSize: fit.maxBatchSize }, t('Batch size {0}', fit.maxBatchSize),
      t('The largest batch size that fits {0}.', fit.gpu));
  }
  for (const leak of leaks) {
    out.push({
      id: 'fix-leak',
      title: t('Fix {0} on line {1}', leak.code, leak.line + 1),
      detail: t('Keeps about {0} more each batch until the loop ends; the quick fix frees it.', formatBytes(leak.bytes)),
      saving: leak.bytes,
      // A leak grows every batch: however small per batch, it fills the card in the end.
      minor: false,
      overrides: {},
      refactor: leak.fixTitle ? { kind: 'quickfix', line: leak.line, title: leak.fixTitle } : undefined,
    });
  }
  // The real savings first, largest first; the minor ones after them (a stable sort keeps their order otherwise).
  return out.sort((a, b) => Number(a.minor) - Number(b.minor));
}

export interface LeakSummary {
  code: string;
  line: number;
  bytes: number;
  /** The loops around the leak run no backward (growth.ts, leakOutsideStep). */
  outsideStep?: boolean;
  /** Title of the finding's preferred quick fix. */
  fixTitle?: string;
}

/** The estimate the panel and the status bar show. */
export function estimateResponse(state: DocumentState, base: BaseEstimate, overrides: EstimateOverrides, settingsGpu: string, leaks: LeakSummary[], refactorings: RefactoringTitles, started: number): EstimateResponse {
  const gpuName = overrides.gpu ?? settingsGpu;
  const result = estimateWith(base, overrides, gpuName);
  const config = result.config;
  const gpu = resolveGpu(gpuName) ?? null;
  const fit = result.fits[0];
  const reserve = result.peakReserved - result.peakAllocated;
  const b = result.breakdown;
  const isText = result.detected.seqLen !== null;
  const isImage = result.detected.imageSize !== null;
  return {
    uri: state.uri,
    version: state.version,
    modelName: config.modelName,
    parameters: result.detected.parameters,
    mode: config.mode,
    peakPhase: result.peakPhase,
    segments: { weights: b.weights, gradients: b.gradients, optimizerStates: b.optimizerStates, activations: b.activations, other: b.other + reserve, cudaContext: result.cudaContext },
    gradientsAfterBackward: result.gradientsAfterBackward,
    total: totalOf(result),
    peakAllocated: result.peakAllocated,
    peakReserved: result.peakReserved,
    gpu,
    fits: fit ? fit.fits : null,
    maxBatchSize: fit ? fit.maxBatchSize : null,
    ...(fit?.noMaxBatchSize ? { noMaxBatchSize: fit.noMaxBatchSize } : {}),
    growth: growthOf(leaks, config, totalOf(result), gpu?.capacity, persistentBytes(result)) ?? null,
    inputs: inputsOf(result, overrides),
    assumptions: result.assumptions,
    suggestions: suggestionsFor(base, result, overrides, gpuName, leaks, refactorings),
    current: {
      batchSize: config.batchSize, seqLen: config.seqLen, imageSize: config.imageSize, precision: config.precision, optimizer: config.optimizer,
      checkpointing: config.checkpointing, accumulation: config.accumulation, gpus: config.gpus, strategy: config.strategy, gpu: gpu?.name ?? gpuName,
    },
    uses: { seqLen: isText, imageSize: isImage },
    elapsedMs: Math.round((performance.now() - started) * 10) / 10,
  };
}

/** The smallest node that spans `offset` (for hovers). */
export function nodeAt(root: Node, offset: number): Node {
  let node = root;
  for (;;) {
    const child = node.children.find((c) => c.startIndex <= offset && offset < c.endIndex);
    if (!child) return node;
    node = child;
  }
}

/** `24 GiB`: a GPU's capacity as its name is usually read. */
export function capacityLabel(capacity: number): string {
  return `${Math.round(capacity / 1024 ** 3)} GiB`;
}
