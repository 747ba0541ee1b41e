// `oomguard/explainOom`: explains the CUDA out-of-memory errors in a text the client sends (a selection, the
// clipboard, a log file). A traceback's script that is open in the editor is read from its shared semantic model;
// one that is not open is read from disk.
import { pathToFileURL } from 'node:url';
import { ResponseError } from 'vscode-languageserver';
import { MAX_ANALYZED_CHARACTERS } from '../engine/analyze';
import { explainText, renderMarkdown, scriptContextFromFile, scriptContextFromModel, type ScriptContext } from '../explain/index';
import { t } from '../l10n';
import { EXPLAIN_OOM_REQUEST } from '../protocol';
import type { ExplainOomParams, ExplainOomResult } from '../protocol';
import type { ServerContext, ServerFeature } from './context';

/** JSON-RPC's "invalid params" code. */
const INVALID_PARAMS = -32602;
/** A pasted log larger than this is cut to its end, where the error is. */
const MAX_TEXT_CHARACTERS = 5_000_000;

/** A link that opens `file` at `line`: through the editor's URI handler when its scheme is known, else a file URL. */
export function fileLink(file: string, line: number, uriScheme?: string): string {
  if (uriScheme && /^[a-z][a-z0-9+.-]*$/i.test(uriScheme)) {
    // `vscode://file/<absolute path>:<line>`; pathToFileURL gives the path percent-encoded, with a leading slash.
    return `${uriScheme}://file${pathToFileURL(file).pathname}:${line}`;
  }
  return `${pathToFileURL(file).href}#L${line}`;
}

async function scriptFor(context: ServerContext, file: string): Promise<ScriptContext | undefined> {
  const uri = pathToFileURL(file).href;
  const options = await context.analysisOptionsFor(uri);
  const state = await context.ready(uri);
  if (state) {
    const model = context.modelOf(state);
    if (!model || state.text.length > MAX_ANALYZED_CHARACTERS) return undefined;
    return scriptContextFromModel({ rootNode: model.root }, model, state.analysisText, state.text, file, options);
  }
  return scriptContextFromFile(file, options);
}

export const explainOom: ServerFeature = {
  register(context) {
    context.connection.onRequest(EXPLAIN_OOM_REQUEST, async (params: ExplainOomParams): Promise<ExplainOomResult | ResponseError<void>> => {
      if (typeof params?.text !== 'string') return new ResponseError(INVALID_PARAMS, t('oomguard/explainOom needs the error text'));
      const text = params.text.length > MAX_TEXT_CHARACTERS ? params.text.slice(-MAX_TEXT_CHARACTERS) : params.text;
      const roots = Array.isArray(params.roots) ? params.roots.filter((root): root is string => typeof root === 'string') : [];
      const explanations = await explainText(text, { roots, scriptFor: (file) => scriptFor(context, file) });
      const uriScheme = typeof params.uriScheme === 'string' ? params.uriScheme : undefined;
      return { markdown: renderMarkdown(explanations, (file, line) => fileLink(file, line, uriScheme)), explanations };
    });
  },
};
