// `oomguard/explainOom`: explains the CUDA out-of-memory errors in a text the client sends (a selection, the
// clipboard, a log file). A traceback's script that is open in the editor is read from its shared semantic model;
// one that is not open is read from disk. In a browser there is no disk: the traceback's file is matched to an open
// document by its trailing path components, and named by that document's URI.
import { pathToFileURL } from 'node:url';
import { ResponseError } from '../lsp';
import { MAX_ANALYZED_CHARACTERS } from '../engine/analyze';
import { explainText, renderMarkdown, scriptContextFromFile, scriptContextFromModel, type ScriptContext } from '../explain/index';
import { host } from '../host';
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

/** The open document whose path ends with the most trailing components of a traceback's file (the name at least). */
export function openDocumentFor(file: string, uris: readonly string[]): string | undefined {
  const parts = file.split(/[\\/]+/).filter((part) => part.length > 0 && part !== '.');
  let best: string | undefined;
  let bestCount = 0;
  for (const uri of uris) {
    let segments: string[];
    try {
      segments = decodeURIComponent(new URL(uri).pathname).split('/').filter((segment) => segment.length > 0);
    } catch {
      continue;
    }
    let count = 0;
    while (count < parts.length && count < segments.length && parts[parts.length - 1 - count] === segments[segments.length - 1 - count]) count++;
    if (count > bestCount) {
      best = uri;
      bestCount = count;
    }
  }
  return best;
}

/** `file` is a path on disk, or in a browser the URI of an open document (openDocumentFor). */
async function scriptFor(context: ServerContext, file: string): Promise<ScriptContext | undefined> {
  const uri = host().kind === 'browser' ? file : pathToFileURL(file).href;
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
      const browser = host().kind === 'browser';
      const explanations = await explainText(text, {
        roots,
        scriptFor: (file) => scriptFor(context, file),
        ...(browser ? { resolveFrame: (file: string) => openDocumentFor(file, context.openDocuments()) } : {}),
      });
      const uriScheme = typeof params.uriScheme === 'string' ? params.uriScheme : undefined;
      // In a browser the script is an open document named by its URI; the Markdown preview's file links
      // (`<scheme>://file/<path>:<line>`) would open the desktop editor, so there are no links there.
      const link = browser ? undefined : (file: string, line: number) => fileLink(file, line, uriScheme);
      return { markdown: renderMarkdown(explanations, link), explanations };
    });
  },
};
