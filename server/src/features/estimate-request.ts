// `oomguard/estimate`: the memory estimate of an open document with the panel's what-if values applied.
import { ResponseError } from '../lsp';
import { t } from '../l10n';
import { ESTIMATE_REQUEST, normalizeOverrides } from '../protocol';
import type { EstimateParams, EstimateResponse } from '../protocol';
import type { ServerFeature } from './context';
import { sizedLeaks } from './leak-sizes';
import { baseEstimate, estimateResponse, isBase, refactoringTitlesOf } from './memory-estimate';

/** JSON-RPC's "invalid params" code, for a request about a document the server does not have open. */
const INVALID_PARAMS = -32602;

export const estimateRequest: ServerFeature = {
  register(context) {
    context.connection.onRequest(ESTIMATE_REQUEST, async (params: EstimateParams): Promise<EstimateResponse | ResponseError<{ unresolved: { line: number | null; reason: string } } | undefined>> => {
      const started = performance.now();
      const uri = params?.textDocument?.uri;
      if (typeof uri !== 'string') return new ResponseError(INVALID_PARAMS, t('oomguard/estimate needs textDocument.uri'));
      const state = await context.ready(uri);
      if (!state) return new ResponseError(INVALID_PARAMS, t('{0} is not open in the server', uri));
      const overrides = normalizeOverrides(params.overrides);
      const found = baseEstimate(context, state);
      // An unresolved model with its parameter count given (the panel's field): persistent state from the count.
      const base = !isBase(found) && found?.withParameters && overrides.params !== undefined ? found.withParameters(overrides.params) : found;
      if (!isBase(base)) {
        // `data.unresolved`: the script builds a model the estimator cannot read (clients show that, not nothing).
        return new ResponseError(INVALID_PARAMS, base?.error ?? t('{0} could not be parsed', uri), base?.unresolved ? { unresolved: base.unresolved } : undefined);
      }
      const settings = await context.settingsFor(uri);
      const model = context.modelOf(state);
      const refactorings = model ? refactoringTitlesOf(state, model, base.loops.training) : {};
      return estimateResponse(state, base, overrides, settings.gpu, sizedLeaks(context, state), refactorings, started);
    });
  },
};
