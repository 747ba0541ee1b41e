// Leak sizes: OOM101 and OOM104 findings say how much they keep per batch, computed from the memory estimate of the
// same document version. The rules only say what they keep; this feature hands the analysis the bytes.
import { analyze } from '../engine/analyze';
import type { AnalysisOptions } from '../engine/analyze';
import type { DocumentState } from '../engine/documents';
import type { ProgramModel } from '../engine/program/interpreter';
import { leakOutsideStep, loopBatchSize } from '../estimator/growth';
import { programOf } from '../estimator/python-values';
import type { ServerContext, ServerFeature } from './context';
import { baseEstimate, filePathOf, isBase, keptBytes, latestEstimate, type LeakSummary } from './memory-estimate';

let context: ServerContext | undefined;

/** `program` is asked for only when a finding's loop needs its batch size (running the program model is not free). */
function sizesFrom(base: ReturnType<typeof latestEstimate>, program?: () => ProgramModel | undefined): AnalysisOptions['keptBytes'] {
  if (!isBase(base)) return undefined;
  const memo = new Map<string, number | undefined>();
  return (keeps, loop) => {
    const model = loop ? program?.() : undefined;
    const batch = model && loop ? loopBatchSize(model, loop) : undefined;
    const key = `${keeps}:${batch ?? ''}`;
    if (!memo.has(key)) memo.set(key, keptBytes(base.config, keeps, batch));
    return memo.get(key);
  };
}

/** The program model the estimate of this version read (shared with it), when the estimate exists. */
function programFor(serverContext: ServerContext, state: DocumentState): ProgramModel | undefined {
  const model = serverContext.modelOf(state);
  return model ? programOf({ rootNode: model.root }, filePathOf(state.uri)) : undefined;
}

function keptBytesFor(serverContext: ServerContext, state: DocumentState): AnalysisOptions['keptBytes'] {
  return sizesFrom(baseEstimate(serverContext, state), () => programFor(serverContext, state));
}

function sizesKey(sizes: AnalysisOptions['keptBytes']): string {
  return JSON.stringify([sizes?.('graph'), sizes?.('output')]);
}

/**
 * Diagnostics must not wait for the memory estimate (it reads the whole script): they use the estimate of the
 * last version that has one, and once typing pauses the estimate is brought up to date; if the sizes it gives
 * differ, the document is analysed again.
 */
const REFRESH_AFTER_MS = 300;
const refreshTimers = new Map<string, NodeJS.Timeout>();
/**
 * The sizes an analysis used when the estimate was of an older version, until its diagnostics are out: the timer
 * starts then (published), as one started before could fire while a long diagnostics message is still being written.
 */
const refreshNeeded = new WeakMap<DocumentState, string>();

function refreshLater(serverContext: ServerContext, state: DocumentState, usedKey: string): void {
  const pending = refreshTimers.get(state.uri);
  if (pending) clearTimeout(pending);
  refreshTimers.set(state.uri, setTimeout(() => {
    refreshTimers.delete(state.uri);
    const current = serverContext.documents.get(state.uri);
    if (!current) return;
    if (sizesKey(keptBytesFor(serverContext, current)) !== usedKey) serverContext.reanalyze(state.uri);
  }, REFRESH_AFTER_MS));
}

/** The sized leaks of a document (for the panel's "fix the leak" suggestions); runs only the two leak rules. */
export function sizedLeaks(serverContext: ServerContext, state: DocumentState): LeakSummary[] {
  const model = serverContext.modelOf(state);
  const sizes = keptBytesFor(serverContext, state);
  if (!model || !sizes) return [];
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
    if (!context) return {};
    const latest = latestEstimate(state);
    // The program model is the estimate's own (built with it) only when the estimate is of this version.
    const serverContext = context;
    const sizes = sizesFrom(latest, latest?.version === state.version ? () => programFor(serverContext, state) : undefined);
    if (latest?.version !== state.version) refreshNeeded.set(state, sizesKey(sizes));
    else refreshNeeded.delete(state);
    return sizes ? { keptBytes: sizes } : {};
  },
  published(state) {
    const usedKey = refreshNeeded.get(state);
    if (!context || usedKey === undefined) return;
    refreshNeeded.delete(state);
    refreshLater(context, state, usedKey);
  },
};
