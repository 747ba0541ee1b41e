// Leak sizes: OOM101 and OOM104 findings say how much they keep per batch, computed from the memory estimate of the
// same document version. The rules only say what they keep; this feature hands the analysis the bytes.
import { analyze } from '../engine/analyze';
import type { AnalysisOptions } from '../engine/analyze';
import type { DocumentState } from '../engine/documents';
import { MAX_ANALYZED_CHARACTERS } from '../engine/limits';
import { loadedParser } from '../engine/parser';
import { flattenTreeInSlices } from '../engine/syntax-tree';
import { leakOutsideStep } from '../estimator/growth';
import { programOf } from '../estimator/python-values';
import { host } from '../host';
import type { ServerContext, ServerFeature } from './context';
import { keptBytesFromTable, leakSizeTable, type LeakSizeTable } from '../estimator/leak-size-table';
import { baseEstimate, filePathOf, isBase, type LeakSummary } from './memory-estimate';

let context: ServerContext | undefined;

/** The leak sizes of a version: `read`, a digest of what the worker's estimate read (absent where this thread computed them). */
interface SizesEntry {
  version: number;
  table: LeakSizeTable | undefined;
  read?: string;
  /**
   * The text they were estimated from: a version whose text is the same (its edits undone) has the same sizes, and
   * no estimate runs for it. The document holds this text while it is its current one, so this adds nothing then.
   */
  text: string;
}

/** Per document: the leak sizes of the last version the memory estimate read. */
const tables = new WeakMap<DocumentState, SizesEntry>();

/** The sizes an analysis of `version` uses: those of the last estimate, its loops' own only if it is of this version. */
function sizesFrom(entry: SizesEntry | undefined, version: number): AnalysisOptions['keptBytes'] {
  return entry?.table ? keptBytesFromTable(entry.table, entry.version === version) : undefined;
}

function sizesKey(sizes: AnalysisOptions['keptBytes']): string {
  return JSON.stringify([sizes?.('graph'), sizes?.('output')]);
}

/** The leak sizes of the document's current version, computed on this thread (shares the estimate of the version). */
function tableOnThisThread(serverContext: ServerContext, state: DocumentState): LeakSizeTable | undefined {
  const base = baseEstimate(serverContext, state);
  const model = serverContext.modelOf(state);
  if (!isBase(base) || !model) return undefined;
  return leakSizeTable(base.config, programOf({ rootNode: model.root }, filePathOf(state.uri)), model.root);
}

/** The leak sizes of the current version: the worker's when it has given them, else computed here. */
function currentTable(serverContext: ServerContext, state: DocumentState): LeakSizeTable | undefined {
  const entry = tables.get(state);
  if (entry?.version === state.version) return entry.table;
  const table = tableOnThisThread(serverContext, state);
  tables.set(state, { version: state.version, table, text: state.analysisText });
  return table;
}

/**
 * The leak sizes of the document's current version, off this thread where the host has a worker (the diagnostics
 * of later versions never wait for them); on this thread where it has none or the worker failed. Only a weak
 * reference to the document waits for the worker: one closed meanwhile goes with the collection that follows its
 * close, not with the first one after the worker's answer.
 */
function sizesOf(serverContext: ServerContext, state: DocumentState): Promise<SizesEntry | undefined> {
  const version = state.version;
  const last = tables.get(state);
  // Every edit since the last estimate was undone: its sizes stand. The worker would start a thread (about 28
  // MiB resident for a few seconds with a 5,000-line script) to find the same.
  if (last?.text === state.analysisText) return Promise.resolve({ ...last, version });
  const document = new WeakRef(state);
  const onThisThread = (): SizesEntry | undefined => {
    const current = document.deref();
    // The document may have changed while the worker ran: only its current version is estimated here.
    if (!current || serverContext.documents.get(current.uri) !== current || current.version !== version) return undefined;
    return { version, table: currentTable(serverContext, current), text: current.analysisText };
  };
  const worker = host().estimateWorker;
  const language = loadedParser()?.language;
  // The worker reads this thread's copy of the tree (made for the diagnostics already: the model's root), flattened
  // into one table that moves to it: it parses nothing again, and no model is built here for it.
  const root = worker && language && state.text.length <= MAX_ANALYZED_CHARACTERS ? (state.syntaxRoot ?? (state.analysisTree && serverContext.modelOf(state)?.root)) : undefined;
  if (worker && language && root) {
    const lastTable = last?.table;
    const text = state.analysisText;
    const file = filePathOf(state.uri);
    // In slices: a keystroke that comes meanwhile is not kept waiting (and makes this version's sizes moot).
    const stillCurrent = () => {
      const current = document.deref();
      return !!current && serverContext.documents.get(current.uri) === current && current.version === version;
    };
    return flattenTreeInSlices(root, language.types, language.fields, stillCurrent).then((tree) => !tree ? undefined : worker.leakSizes(text, tree, file, last?.read).then(
      (sizes) => ({ version, table: sizes.unchanged ? lastTable : sizes.table, read: sizes.read, text }),
      // The worker could not run: the estimate runs here, as it does without one.
      () => onThisThread(),
    ));
  }
  return Promise.resolve(onThisThread());
}

/**
 * Diagnostics must not wait for the memory estimate (it reads the whole script): they use the sizes of the last
 * version that has them, and once typing pauses the sizes are brought up to date; if they differ, the document is
 * analysed again.
 */
const REFRESH_AFTER_MS = 300;
const refreshTimers = new Map<string, NodeJS.Timeout>();
/** Per document whose sizes are being computed: whether a newer version asked for them meanwhile. */
const refreshing = new Map<string, { again: boolean }>();
/**
 * The sizes an analysis used when the estimate was of an older version, until its diagnostics are out: the timer
 * starts then (published), as one started before could fire while a long diagnostics message is still being written.
 */
const refreshNeeded = new WeakMap<DocumentState, string>();

function refreshLater(serverContext: ServerContext, state: DocumentState): void {
  const pending = refreshTimers.get(state.uri);
  if (pending) clearTimeout(pending);
  // A document just opened has no sizes at all: nothing is being typed, its estimate starts at once (edits that
  // come while it runs are typing: they wait for a pause, as all later ones do).
  const delay = tables.has(state) || refreshing.has(state.uri) ? REFRESH_AFTER_MS : 0;
  refreshTimers.set(state.uri, setTimeout(() => {
    refreshTimers.delete(state.uri);
    void refresh(serverContext, state.uri);
  }, delay));
}

/** Asks for the sizes of the document's current version, if an analysis used older ones; holds the document weakly. */
function startSizes(serverContext: ServerContext, uri: string) {
  const state = serverContext.documents.get(uri);
  const usedKey = state && refreshNeeded.get(state);
  if (!state || usedKey === undefined) return undefined;
  return { document: new WeakRef(state), version: state.version, usedKey, sizes: sizesOf(serverContext, state) };
}

async function refresh(serverContext: ServerContext, uri: string): Promise<void> {
  const running = refreshing.get(uri);
  if (running) {
    running.again = true;
    return;
  }
  const run = { again: false };
  refreshing.set(uri, run);
  try {
    const started = startSizes(serverContext, uri);
    if (!started) return;
    const { version, usedKey } = started;
    const entry = await started.sizes;
    const state = started.document.deref();
    if (!entry || !state || serverContext.documents.get(uri) !== state) return;
    // Sizes of an older version than the last ones are dropped; those of a version since edited are kept (the
    // next analyses use them at the configuration's batch size) while that version asks for its own.
    if ((tables.get(state)?.version ?? -Infinity) < version) tables.set(state, entry);
    if (state.version !== version) return;
    refreshNeeded.delete(state);
    if (sizesKey(sizesFrom(entry, version)) !== usedKey) serverContext.reanalyze(uri);
  } finally {
    refreshing.delete(uri);
    // A pause in typing asked for newer sizes meanwhile: asked for now, unless typing has resumed since (a timer is
    // set again), which asks once it pauses; asked at once, the document's text was copied to the worker, and the
    // sizes that came back analysed it again, in the middle of a burst of keystrokes.
    if (run.again && !refreshTimers.has(uri)) void refresh(serverContext, uri);
  }
}

/** The sized leaks of a document (for the panel's "fix the leak" suggestions); runs only the two leak rules. */
export function sizedLeaks(serverContext: ServerContext, state: DocumentState): LeakSummary[] {
  const model = serverContext.modelOf(state);
  const table = currentTable(serverContext, state);
  if (!model || !table) return [];
  const sizes = keptBytesFromTable(table, true);
  return analyze(model, state.analysisText, { select: ['OOM101', 'OOM104'], keptBytes: sizes })
    .filter((finding) => finding.sizeHint)
    .map((finding) => ({
      code: finding.code,
      line: finding.range.start.line,
      bytes: finding.sizeHint!.bytes,
      outsideStep: leakOutsideStep(model, finding.range.start),
      fixTitle: (finding.fixes.find((fix) => fix.preferred) ?? finding.fixes[0])?.title,
    }));
}

export const leakSizes: ServerFeature = {
  register(serverContext) {
    context = serverContext;
  },
  analysisOptions(state) {
    const entry = tables.get(state);
    const sizes = sizesFrom(entry, state.version);
    if (entry?.version !== state.version) refreshNeeded.set(state, sizesKey(sizes));
    else refreshNeeded.delete(state);
    return sizes ? { keptBytes: sizes } : {};
  },
  published(state) {
    if (!context || !refreshNeeded.has(state)) return;
    refreshLater(context, state);
  },
  closed(uri) {
    const timer = refreshTimers.get(uri);
    if (timer) clearTimeout(timer);
    refreshTimers.delete(uri);
  },
};
