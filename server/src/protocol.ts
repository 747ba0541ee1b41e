// Everything the extension client, the language server and the webview agree on: settings, custom requests and
// commands. Both sides import this one module, so a change of shape is a compile error on both.
import type { Severity } from './engine/types';

export const SERVER_NAME = 'OOM Guard';
export const DIAGNOSTIC_SOURCE = 'oomguard';
export const DOCS_BASE_URL = 'https://github.com/oomguard/oomguard/blob/main/docs/';

/** A rule's doc page; Chinese readers (`zh`, `zh-cn`, `zh-CN`…) get the translated page. */
export function ruleDocUrl(code: string, locale?: string): string {
  const folder = locale && /^zh\b/i.test(locale) ? 'zh-CN/rules' : 'rules';
  return `${DOCS_BASE_URL}${folder}/${code}.md`;
}

/** The `oomguard.*` settings, as the server reads them for one document. */
export interface Settings {
  enable: boolean;
  rules: {
    select: string[];
    ignore: string[];
    severity: Record<string, Severity | 'off'>;
    /** Glob (gitignore syntax, relative to the folder of the nearest pyproject.toml) → codes ignored in matching files. */
    perFileIgnores: Record<string, string[]>;
  };
  /**
   * The GPU that CodeLens, status bar and panel compare the estimate against: a catalog name or alias, `auto` (the
   * local GPU with the most free memory, from nvidia-smi) or `custom` (customGpuMemory). The server replaces `auto`
   * and `custom` by the name of the GPU they chose (features/gpu-target.ts) before any feature reads it.
   */
  gpu: string;
  /** GiB of the GPU that `gpu: "custom"` means; 0: not set. */
  customGpuMemory: number;
}

export const DEFAULT_SETTINGS: Settings = {
  enable: true,
  rules: { select: [], ignore: [], severity: {}, perFileIgnores: {} },
  gpu: 'RTX 4090',
  customGpuMemory: 0,
};

/** `oomguard.rules.perFileIgnores`: keeps the globs whose value is a list of codes. */
function perFileIgnores(raw: unknown): Record<string, string[]> {
  const result: Record<string, string[]> = {};
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return result;
  for (const [glob, codes] of Object.entries(raw as Record<string, unknown>)) {
    if (Array.isArray(codes)) result[glob] = codes.filter((code): code is string => typeof code === 'string').map((code) => code.toUpperCase());
  }
  return result;
}

/** Merges what a client sent (possibly partial or malformed) over the defaults. */
export function normalizeSettings(raw: unknown): Settings {
  const value = (raw ?? {}) as Partial<{ enable: unknown; gpu: unknown; customGpuMemory: unknown; rules: Partial<Record<keyof Settings['rules'], unknown>> }>;
  const strings = (list: unknown) => (Array.isArray(list) ? list.filter((item): item is string => typeof item === 'string') : []);
  const severities: Record<string, Severity | 'off'> = {};
  const rawSeverity = value.rules?.severity;
  if (rawSeverity && typeof rawSeverity === 'object') {
    for (const [code, level] of Object.entries(rawSeverity as Record<string, unknown>)) {
      if (level === 'error' || level === 'warning' || level === 'information' || level === 'hint' || level === 'off') {
        severities[code.toUpperCase()] = level;
      }
    }
  }
  return {
    enable: typeof value.enable === 'boolean' ? value.enable : DEFAULT_SETTINGS.enable,
    rules: { select: strings(value.rules?.select), ignore: strings(value.rules?.ignore), severity: severities, perFileIgnores: perFileIgnores(value.rules?.perFileIgnores) },
    gpu: typeof value.gpu === 'string' && value.gpu.trim() !== '' ? value.gpu.trim() : DEFAULT_SETTINGS.gpu,
    customGpuMemory: typeof value.customGpuMemory === 'number' && Number.isFinite(value.customGpuMemory) && value.customGpuMemory > 0 ? value.customGpuMemory : 0,
  };
}

/** Commands the server executes (workspace/executeCommand). */
export const Commands = {
  showDocumentation: 'oomguard.showDocumentation',
} as const;

// ---------------------------------------------------------------- memory estimate (request, panel messages)

/** `oomguard/estimate`: the estimate of one open document, with what-if values applied. */
export const ESTIMATE_REQUEST = 'oomguard/estimate';
/** The client command that opens the memory panel; CodeLens titles carry it with the document URI. */
export const SHOW_MEMORY_ESTIMATE_COMMAND = 'oomguard.showMemoryEstimate';

/** What-if values; each one replaces what was detected in the script. */
export interface EstimateOverrides {
  batchSize?: number;
  seqLen?: number;
  imageSize?: number;
  precision?: EstimatePrecision;
  optimizer?: EstimateOptimizer;
  checkpointing?: boolean;
  accumulation?: number;
  gpus?: number;
  strategy?: EstimateStrategy;
  /** Catalog GPU to check the fit against. */
  gpu?: string;
  /** The model's parameter count, where the estimator cannot read the model (the panel asks for it). */
  params?: number;
}

export const PRECISIONS = ['fp32', 'fp16-amp', 'bf16-amp', 'bf16', 'fp16'] as const;
export const OPTIMIZERS = ['sgd', 'sgd-momentum', 'adam', 'adamw', 'adafactor', 'adam-8bit', 'rmsprop', 'adagrad', 'adadelta', 'sparse-adam', 'lbfgs'] as const;
export const STRATEGIES = ['ddp', 'fsdp', 'zero1', 'zero2', 'zero3'] as const;
export type EstimatePrecision = (typeof PRECISIONS)[number];
export type EstimateOptimizer = (typeof OPTIMIZERS)[number];
export type EstimateStrategy = (typeof STRATEGIES)[number];

export interface EstimateParams {
  textDocument: { uri: string };
  overrides?: EstimateOverrides;
}

/** One input the estimate read, with the 0-based line it came from (null: assumed or set as a what-if value). */
export interface EstimateInput {
  key: 'model' | 'batchSize' | 'seqLen' | 'targetLen' | 'imageSize' | 'precision' | 'optimizer' | 'checkpointing' | 'accumulation' | 'mode' | 'lora' | 'strategy';
  label: string;
  value: string;
  line: number | null;
  /** 'overridden' when a what-if control replaced the script's value. */
  origin: 'detected' | 'assumed' | 'overridden';
}

/** The bar's segments, in bytes per GPU; they add up to `total` (what nvidia-smi would show at the peak). */
export interface EstimateSegments {
  weights: number;
  gradients: number;
  optimizerStates: number;
  activations: number;
  /** Workspaces, transients and what the caching allocator reserves beyond what is allocated. */
  other: number;
  cudaContext: number;
}

/**
 * A change that saves less than this fraction of the peak is listed as minor (after the others, de-emphasized): the
 * estimate itself is only as close as its calibration (docs/estimator-measurements.md), so a change of a few MiB on
 * a peak of many GiB is inside its error and not worth a refactoring of the training loop. 2 % of a 24 GiB card is
 * about 0.5 GiB, a change a user can see in nvidia-smi.
 */
export const MINOR_SAVING_FRACTION = 0.02;

export interface MemorySuggestion {
  id: 'amp' | 'checkpointing' | 'accumulation' | 'smaller-batch' | 'fix-leak';
  title: string;
  detail: string;
  /** Bytes the estimator predicts this change saves at the peak (0 when it only removes a leak's growth). */
  saving: number;
  /** The saving is a small fraction of the peak (MINOR_SAVING_FRACTION): the panel lists it after the others, muted. */
  minor: boolean;
  /** The what-if values that show the change in the panel. */
  overrides: EstimateOverrides;
  /** The code action that makes the change: its kind, the 0-based line to ask at, and its title. */
  refactor?: { kind: string; line: number; title: string };
}

export interface EstimateResponse {
  uri: string;
  version: number;
  /** Set when nothing could be estimated (file too large, not parsed); the rest is then empty. */
  error?: string;
  modelName: string;
  parameters: number;
  mode: string;
  peakPhase: string;
  segments: EstimateSegments;
  /** All gradients per GPU once backward is done; `segments.gradients` are those that exist at the peak. */
  gradientsAfterBackward: number;
  total: number;
  peakAllocated: number;
  peakReserved: number;
  gpu: { name: string; capacity: number } | null;
  fits: boolean | null;
  /** Largest batch size whose peak fits the GPU, at most 65,536 (`MAX_BATCH_SIZE`); null: not even one, or no GPU. */
  maxBatchSize: number | null;
  /** Why no largest batch is given where the batch size does not scale the step (a full-graph step). */
  noMaxBatchSize?: string;
  /**
   * A leak that keeps memory every batch (OOM101/OOM104 with a size, or outputs a loop keeps without a graph): how
   * much, where, and when the GPU is full; `batches` and `keptAfterBatches` where the script fixes how many batches
   * the loop runs (what they hold at its end, on top of the step's peak).
   */
  growth: { bytesPerBatch: number; line: number; batchesUntilFull: number | null; batches?: number; keptAfterBatches?: number; heldBeside?: number } | null;
  inputs: EstimateInput[];
  assumptions: string[];
  suggestions: MemorySuggestion[];
  /** The values the what-if controls start from (detected or assumed, overrides applied). */
  current: Required<Omit<EstimateOverrides, 'gpu' | 'params'>> & { gpu: string };
  /** Which what-if controls apply to this model. */
  uses: { seqLen: boolean; imageSize: boolean };
  /** Milliseconds the server spent on this request. */
  elapsedMs: number;
}

/** GPUs the panel offers, from the estimator's catalog. */
export interface GpuChoice {
  name: string;
  capacity: number;
}

/** Every string the panel shows that is not from the script; the extension localizes them with vscode.l10n.t. */
export interface WebviewStrings {
  title: string;
  noDocument: string;
  /** Label of the field that asks for the parameter count of a model the estimator cannot read. */
  parameterCount: string;
  /** Its button. */
  estimateWithParameters: string;
  peak: string;
  fits: string;
  doesNotFit: string;
  /** `Line {0} keeps {1} more every batch` (growth without a GPU to check). */
  growth: string;
  /** `Line {0} keeps {1} more every batch: out of memory after about {2} batches.` */
  growthUntilFull: string;
  /** `The loop runs {0} batches: about {1} at its end.` (the batches the script fixes, and the peak after them). */
  growthBatches: string;
  weights: string;
  gradients: string;
  optimizerStates: string;
  activations: string;
  other: string;
  cudaContext: string;
  total: string;
  capacity: string;
  part: string;
  size: string;
  /** Header of the column of each part's percentage of the peak. */
  share: string;
  inputs: string;
  detected: string;
  assumed: string;
  overridden: string;
  line: string;
  whatIf: string;
  batchSize: string;
  seqLen: string;
  imageSize: string;
  precision: string;
  optimizer: string;
  checkpointing: string;
  accumulation: string;
  gpus: string;
  strategy: string;
  gpu: string;
  reset: string;
  maxBatch: string;
  suggestions: string;
  noSuggestions: string;
  apply: string;
  tryIt: string;
  saves: string;
  /** `saves only ≈ {0}`: a minor suggestion's saving. */
  savesLittle: string;
  assumptions: string;
  computedIn: string;
  breakdownLabel: string;
  /** `At the peak ({0}) the gradients hold {1}; …`: why the gradients of the breakdown are fewer than the model's. */
  gradientsLater: string;
  phaseForward: string;
  phaseBackward: string;
  model: string;
  on: string;
  off: string;
}

export type HostToWebview =
  | { type: 'init'; strings: WebviewStrings; gpus: GpuChoice[] }
  | { type: 'estimate'; fileName: string; response: EstimateResponse; overrides: EstimateOverrides }
  | { type: 'noDocument' }
  | { type: 'notice'; text: string }
  /** No estimate: the model could not be read; the panel asks for its parameter count. */
  | { type: 'unresolved'; text: string };

export type WebviewToHost =
  | { type: 'ready' }
  | { type: 'recompute'; overrides: EstimateOverrides }
  | { type: 'reveal'; line: number }
  | { type: 'applySuggestion'; id: MemorySuggestion['id']; kind: string; line: number; title: string };

function positiveInt(value: unknown, max = 1 << 20): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= max ? value : undefined;
}

function member<T extends string>(value: unknown, allowed: readonly T[]): T | undefined {
  return typeof value === 'string' && (allowed as readonly string[]).includes(value) ? (value as T) : undefined;
}

/** Keeps the well-formed what-if values of untrusted input (a webview message, a client request) and drops the rest. */
export function normalizeOverrides(raw: unknown): EstimateOverrides {
  if (!raw || typeof raw !== 'object') return {};
  const value = raw as Record<string, unknown>;
  const out: EstimateOverrides = {};
  const batchSize = positiveInt(value.batchSize);
  if (batchSize !== undefined) out.batchSize = batchSize;
  const seqLen = positiveInt(value.seqLen);
  if (seqLen !== undefined) out.seqLen = seqLen;
  const imageSize = positiveInt(value.imageSize, 16384);
  if (imageSize !== undefined) out.imageSize = imageSize;
  const accumulation = positiveInt(value.accumulation, 4096);
  if (accumulation !== undefined) out.accumulation = accumulation;
  const gpus = positiveInt(value.gpus, 4096);
  if (gpus !== undefined) out.gpus = gpus;
  const precision = member(value.precision, PRECISIONS);
  if (precision) out.precision = precision;
  const optimizer = member(value.optimizer, OPTIMIZERS);
  if (optimizer) out.optimizer = optimizer;
  const strategy = member(value.strategy, STRATEGIES);
  if (strategy) out.strategy = strategy;
  if (typeof value.checkpointing === 'boolean') out.checkpointing = value.checkpointing;
  if (typeof value.gpu === 'string' && value.gpu.trim() !== '' && value.gpu.length <= 100) out.gpu = value.gpu.trim();
  // A parameter count between a thousand and ten trillion (`1.2e9`).
  if (typeof value.params === 'number' && Number.isFinite(value.params) && value.params >= 1e3 && value.params <= 1e13) out.params = Math.round(value.params);
  return out;
}

/** Validates a message from the webview; anything malformed is undefined, never trusted. */
export function parseWebviewMessage(raw: unknown): WebviewToHost | undefined {
  if (!raw || typeof raw !== 'object') return undefined;
  const message = raw as Record<string, unknown>;
  switch (message.type) {
    case 'ready':
      return { type: 'ready' };
    case 'recompute':
      return { type: 'recompute', overrides: normalizeOverrides(message.overrides) };
    case 'reveal': {
      const line = message.line;
      return typeof line === 'number' && Number.isInteger(line) && line >= 0 ? { type: 'reveal', line } : undefined;
    }
    case 'applySuggestion': {
      const id = member(message.id, ['amp', 'checkpointing', 'accumulation', 'smaller-batch', 'fix-leak'] as const);
      const { kind, line, title } = message;
      // Only code action kinds: a refactoring, or the quick fix of a leak.
      if (!id || typeof kind !== 'string' || !/^(refactor|quickfix)(\.|$)/.test(kind) || typeof line !== 'number' || !Number.isInteger(line) || line < 0) return undefined;
      if (typeof title !== 'string' || title.length === 0 || title.length > 500) return undefined;
      return { type: 'applySuggestion', id, kind, line, title };
    }
    default:
      return undefined;
  }
}

// ---------------------------------------------------------------- explain a CUDA out-of-memory error

/** `oomguard/explainOom`: explains the CUDA out-of-memory errors in a text (a selection, the clipboard, a log). */
export const EXPLAIN_OOM_REQUEST = 'oomguard/explainOom';
/** The client command that asks for it. */
export const EXPLAIN_OOM_COMMAND = 'oomguard.explainOom';

export interface ExplainOomParams {
  text: string;
  /** File-system folders where a traceback's script is looked up: the log's folder, then the workspace folders. */
  roots?: string[];
  /**
   * The editor's URI scheme (`vscode.env.uriScheme`: `vscode`, `code-oss`…). VS Code's Markdown preview follows
   * `<scheme>://file/<path>:<line>` links and refuses `file:` ones, so links are written that way when it is given.
   */
  uriScheme?: string;
}

export interface ExplainOomResult {
  /** The explanations rendered as Markdown, with links to the frames and findings (see ExplainOomParams.uriScheme). */
  markdown: string;
  explanations: import('./explain/explain').Explanation[];
}

/**
 * Server → client, in VS Code for the Web only: the nearest pyproject.toml at or above a document, read through
 * the editor's file system (vscode.workspace.fs), since the web worker has no disk. The client watches
 * pyproject.toml files and notifies changes (workspace/didChangeWatchedFiles), after which the server asks again.
 */
export const FIND_PYPROJECT_REQUEST = 'oomguard/findPyproject';

export interface FindPyprojectParams {
  /** The document's URI. */
  uri: string;
}

/** The pyproject.toml found (its URI and text), or null when none is at or above the document's folder. */
export type FindPyprojectResult = { uri: string; text: string } | null;

/**
 * The first message the browser client posts to the server's web worker, before any LSP message: the two .wasm
 * files web-tree-sitter needs, as the client read them from the extension's own URI.
 */
export interface WorkerStartMessage {
  type: 'oomguard/start';
  treeSitterWasm: Uint8Array;
  pythonWasm: Uint8Array;
}
