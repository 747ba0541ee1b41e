// The language server: wires LSP documents, settings and requests to the engine, and nothing more.
// Start with `node dist/server.js --stdio` (any LSP client) or through the VS Code extension.
import {
  CodeAction,
  CodeActionKind,
  createConnection,
  Diagnostic,
  DiagnosticSeverity,
  ProposedFeatures,
  TextDocumentSyncKind,
} from 'vscode-languageserver/node';
import type { CodeActionParams, Connection, InitializeParams, InitializeResult, ResponseError } from 'vscode-languageserver/node';
import { MAX_ANALYZED_CHARACTERS, tooLargeMessage } from './engine/analyze';
import { invalidParams, validChanges } from './params';
import { analyzeIncrementally, completeFacts } from './engine/incremental';
import type { AnalysisCache } from './engine/incremental';
import type { AnalysisOptions } from './engine/analyze';
import { DocumentStore } from './engine/documents';
import type { DocumentState } from './engine/documents';
import { loadPython } from './engine/parser';
import type { Finding, Severity } from './engine/types';
import { configureLocale, t } from './l10n';
import { VERSION } from './version';
import { codeActionsFor } from './code-actions';
import { EditorConfiguration } from './config/editor';
import { FEATURES } from './features';
import { FIX_ALL_KIND } from './features/fix-all';
import type { ServerContext } from './features/context';
import { Commands, DEFAULT_SETTINGS, DIAGNOSTIC_SOURCE, normalizeSettings, ruleDocUrl } from './protocol';
import type { DiagnosticData, Settings } from './protocol';

const SEVERITY: Record<Severity, DiagnosticSeverity> = {
  error: DiagnosticSeverity.Error,
  warning: DiagnosticSeverity.Warning,
  information: DiagnosticSeverity.Information,
  hint: DiagnosticSeverity.Hint,
};

export function toDiagnostic(finding: Finding, locale?: string): Diagnostic {
  const data: DiagnosticData = { code: finding.code, fixes: finding.fixes };
  return {
    range: finding.range,
    severity: SEVERITY[finding.severity],
    code: finding.code,
    codeDescription: { href: ruleDocUrl(finding.code, locale) },
    source: DIAGNOSTIC_SOURCE,
    message: finding.message,
    data,
  };
}

/** The code action kinds the server offers (quick fixes, refactorings, fix-all on save). */
const CODE_ACTION_KINDS: string[] = [CodeActionKind.QuickFix, CodeActionKind.RefactorRewrite, FIX_ALL_KIND];

/** Everything in the options that changes findings, as a string: cached findings are reused only under the same. */
function optionsKey(options: AnalysisOptions): string {
  return JSON.stringify([options.select, options.ignore, options.severity, options.keptBytes?.('graph'), options.keptBytes?.('output')]);
}

const TRACE_ANALYSIS = process.env.OOMGUARD_TRACE_ANALYSIS === '1';

export function startServer(connection: Connection): void {
  const documents = new DocumentStore();
  /** Per-document queue: LSP changes must be applied one after another, each on the tree of the last. */
  const queues = new Map<string, Promise<unknown>>();
  const pending = new Map<string, NodeJS.Immediate>();
  const settingsCache = new Map<string, Promise<Settings>>();
  let canPullConfiguration = false;
  let initialSettings: Settings = DEFAULT_SETTINGS;
  let clientLocale: string | undefined;
  // pyproject.toml's [tool.oomguard] under the settings; a broken file is reported once, then the defaults apply.
  const editorConfig = new EditorConfiguration((message) => void connection.window.showWarningMessage(message));
  const context: ServerContext = {
    connection,
    documents,
    ready: async (uri) => {
      await queues.get(uri);
      return documents.get(uri);
    },
    modelOf: (state) => documents.modelOf(state),
    settingsFor: (uri) => settingsFor(uri),
    locale: () => clientLocale,
    reanalyze: (uri) => schedule(uri),
    analysisOptionsFor: async (uri) => editorConfig.optionsFor(uri, await settingsFor(uri)),
  };

  const enqueue = (uri: string, work: () => Promise<unknown>) => {
    const next = (queues.get(uri) ?? Promise.resolve()).then(work, work);
    queues.set(uri, next.catch(() => undefined));
    return next;
  };

  const settingsFor = (uri: string): Promise<Settings> => {
    if (!canPullConfiguration) return Promise.resolve(initialSettings);
    let cached = settingsCache.get(uri);
    if (!cached) {
      cached = connection.workspace
        .getConfiguration({ scopeUri: uri, section: 'oomguard' })
        .then(normalizeSettings, () => initialSettings);
      settingsCache.set(uri, cached);
    }
    return cached;
  };

  /** Per document, what the last analysis found per top-level statement (see engine/incremental.ts). */
  const analysisCaches = new Map<string, AnalysisCache>();

  const publish = async (state: DocumentState) => {
    const version = state.version;
    const settings = await settingsFor(state.uri);
    // A newer version arrived while settings were read: its own run will publish.
    if (documents.get(state.uri)?.version !== version) return;
    if (!settings.enable) {
      await connection.sendDiagnostics({ uri: state.uri, version, diagnostics: [] });
      return;
    }
    if (state.text.length > MAX_ANALYZED_CHARACTERS) {
      connection.console.info(`${state.uri}: ${tooLargeMessage(state.text.length)}`);
      await connection.sendDiagnostics({ uri: state.uri, version, diagnostics: [] });
      return;
    }
    const model = documents.modelOf(state);
    if (!model) return;
    const options: AnalysisOptions = {
      ...editorConfig.optionsFor(state.uri, settings),
      ...Object.assign({}, ...FEATURES.map((feature) => feature.analysisOptions?.(state, settings) ?? {})),
      onRuleError: (code, error) =>
        connection.console.error(t('Rule {0} failed on {1}: {2}', code, state.uri, error instanceof Error ? error.stack ?? error.message : String(error))),
    };
    const { findings, cache, analysedStatements } = analyzeIncrementally(model, state.text, options, optionsKey(options), analysisCaches.get(state.uri));
    // For `npm run bench`: which path each analysis took.
    if (TRACE_ANALYSIS) connection.console.log(`analysed ${analysedStatements} of ${model.root.children.length} statements`);
    analysisCaches.set(state.uri, cache);
    await connection.sendDiagnostics({ uri: state.uri, version, diagnostics: findings.map((finding) => toDiagnostic(finding, clientLocale)) });
    // Once the diagnostics are out, still inside this document's queue (before its next change moves the
    // statements): what the next edit needs to reuse these findings.
    completeFacts(model, cache);
  };

  /** Re-analysis runs once the burst of changes read together has been applied (coalesced, not timed). */
  const schedule = (uri: string) => {
    const previous = pending.get(uri);
    if (previous) clearImmediate(previous);
    pending.set(
      uri,
      setImmediate(() => {
        pending.delete(uri);
        void enqueue(uri, async () => {
          const state = documents.get(uri);
          if (state) await publish(state);
        });
      }),
    );
  };

  connection.onInitialize((params: InitializeParams): InitializeResult => {
    canPullConfiguration = !!params.capabilities.workspace?.configuration;
    const options = params.initializationOptions as { settings?: unknown; locale?: unknown } | undefined;
    if (options?.settings) initialSettings = normalizeSettings(options.settings);
    clientLocale = typeof options?.locale === 'string' ? options.locale : params.locale;
    configureLocale(clientLocale);
    return {
      capabilities: {
        textDocumentSync: { openClose: true, change: TextDocumentSyncKind.Incremental },
        codeActionProvider: { codeActionKinds: CODE_ACTION_KINDS },
        executeCommandProvider: { commands: [Commands.showDocumentation] },
        ...Object.assign({}, ...FEATURES.map((feature) => feature.capabilities ?? {})),
      },
      serverInfo: { name: 'oomguard', version: VERSION },
    };
  });

  connection.onInitialized(() => {
    // Warm up the parser so the first document does not pay for loading the .wasm files.
    void loadPython();
  });

  connection.onDidChangeConfiguration((change) => {
    settingsCache.clear();
    const settings = (change.settings as { oomguard?: unknown } | undefined)?.oomguard;
    if (settings) initialSettings = normalizeSettings(settings);
    for (const uri of queues.keys()) if (documents.get(uri)) schedule(uri);
  });

  connection.onDidOpenTextDocument(({ textDocument }) => {
    void enqueue(textDocument.uri, () => documents.open(textDocument.uri, textDocument.version, textDocument.text));
    schedule(textDocument.uri);
  });

  connection.onDidChangeTextDocument(({ textDocument, contentChanges }) => {
    // A change with a negative or reversed range would corrupt the document: refused, and said so.
    if (typeof textDocument?.uri !== 'string' || !validChanges(contentChanges)) {
      connection.console.error(t('Ignored a didChange with an invalid range for {0}', String(textDocument?.uri)));
      return;
    }
    void enqueue(textDocument.uri, () => documents.change(textDocument.uri, textDocument.version, contentChanges));
    schedule(textDocument.uri);
  });

  connection.onDidCloseTextDocument(({ textDocument }) => {
    const uri = textDocument.uri;
    const timer = pending.get(uri);
    if (timer) clearImmediate(timer);
    pending.delete(uri);
    void enqueue(uri, async () => {
      documents.close(uri);
      analysisCaches.delete(uri);
      settingsCache.delete(uri);
      queues.delete(uri);
      await connection.sendDiagnostics({ uri, diagnostics: [] });
    });
  });

  connection.onCodeAction(async (params: CodeActionParams): Promise<CodeAction[] | ResponseError<void>> => {
    const invalid = invalidParams('textDocument/codeAction', params, 'range');
    if (invalid) return invalid;
    const state = await context.ready(params.textDocument.uri);
    if (!state) return [];
    // Fix-all re-reads the findings from the shared model, so it needs the same options as the diagnostics.
    const analysisOptions = editorConfig.optionsFor(state.uri, await settingsFor(state.uri));
    return codeActionsFor({ text: state.text, lineStarts: state.lineStarts, params, model: documents.modelOf(state), analysisOptions });
  });

  for (const feature of FEATURES) feature.register(context);

  connection.onExecuteCommand(async ({ command, arguments: args }) => {
    if (command === Commands.showDocumentation && typeof args?.[0] === 'string') {
      await connection.window.showDocument({ uri: ruleDocUrl(args[0], clientLocale), external: true });
    }
  });

  connection.listen();
}

if (require.main === module) {
  // Compile the grammar's WebAssembly while the client is still sending `initialize`.
  void loadPython();
  startServer(createConnection(ProposedFeatures.all));
}
