// Leak sizes: OOM101 and OOM104 findings say how much they keep per batch, computed from the memory estimate of the
// same document version. The rules only say what they keep; this feature hands the analysis the bytes.
import { analyze } from '../engine/analyze';
import type { AnalysisOptions } from '../engine/analyze';
import type { DocumentState } from '../engine/documents';
import type { KeptMemory } from '../engine/types';
import type { ServerContext, ServerFeature } from './context';
import { baseEstimate, isBase, keptBytes, latestEstimate, type LeakSummary } from './memory-estimate';

let context: ServerContext | undefined;

function sizesFrom(base: ReturnType<typeof latestEstimate>): AnalysisOptions['keptBytes'] {
  if (!isBase(base)) return undefined;
  const memo = new Map<KeptMemory, number | undefined>();
  return (keeps) => {
    if (!memo.has(keeps)) memo.set(keeps, keptBytes(base.config, keeps));
    return memo.get(keeps);
  };
}

function keptBytesFor(serverContext: ServerContext, state: DocumentState): AnalysisOptions['keptBytes'] {
  return sizesFrom(baseEstimate(serverContext, state));
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
    const sizes = sizesFrom(latest);
    if (latest?.version !== state.version) refreshLater(context, state, sizesKey(sizes));
    return sizes ? { keptBytes: sizes } : {};
  },
};
