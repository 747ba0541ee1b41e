// Leak sizes: OOM101 and OOM104 findings say how much they keep per batch, computed from the memory estimate of the
// same document version. The rules only say what they keep; this feature hands the analysis the bytes.
import { analyze } from '../engine/analyze';
import type { AnalysisOptions } from '../engine/analyze';
import type { DocumentState } from '../engine/documents';
import type { KeptMemory } from '../engine/types';
import type { ServerContext, ServerFeature } from './context';
import { baseEstimate, isBase, keptBytes, type LeakSummary } from './memory-estimate';

let context: ServerContext | undefined;

function keptBytesFor(serverContext: ServerContext, state: DocumentState): AnalysisOptions['keptBytes'] {
  const base = baseEstimate(serverContext, state);
  if (!isBase(base)) return undefined;
  const memo = new Map<KeptMemory, number | undefined>();
  return (keeps) => {
    if (!memo.has(keeps)) memo.set(keeps, keptBytes(base.config, keeps));
    return memo.get(keeps);
  };
}

/** The sized leaks of a document (for the panel's "fix the leak" suggestions); runs only the two leak rules. */
export function sizedLeaks(serverContext: ServerContext, state: DocumentState): LeakSummary[] {
  const model = serverContext.modelOf(state);
  const sizes = keptBytesFor(serverContext, state);
  if (!model || !sizes) return [];
  return analyze(model, state.analysisText, { select: ['OOM101', 'OOM104'], keptBytes: sizes })
    .filter((finding) => finding.sizeHint)
    .map((finding) => ({ code: finding.code, line: finding.range.start.line, bytes: finding.sizeHint!.bytes }));
}

export const leakSizes: ServerFeature = {
  register(serverContext) {
    context = serverContext;
  },
  analysisOptions(state) {
    if (!context) return {};
    const sizes = keptBytesFor(context, state);
    return sizes ? { keptBytes: sizes } : {};
  },
};
