// The language server: wires LSP documents, settings and requests to the engine, and nothing more. The same code
// runs in Node (node-server.ts: `node dist/server.js --stdio`, any LSP client, or the VS Code extension) and in a
// browser's web worker (web/worker-server.ts, VS Code for the Web); what differs is the Host each passes in.
import { CodeActionKind, DiagnosticSeverity, RAL, TextDocumentSyncKind } from './lsp';
import type { CodeAction, CodeActionParams, Connection, Diagnostic, Disposable, InitializeParams, InitializeResult, ResponseError } from 'vscode-languageserver';
import { MAX_ANALYZED_CHARACTERS, tooLargeMessage } from './engine/analyze';
import { invalidParams, validChanges } from './params';
import { analyzeIncrementally, completeFacts, completeFactsForEdit, completeFactsOnRows, completeSomeFacts } from './engine/incremental';
import type { SemanticModel } from './engine/semantic/model';
import type { AnalysisCache } from './engine/incremental';
import type { AnalysisOptions } from './engine/analyze';
import { DocumentStore, offsetAt } from './engine/documents';
import type { TextChange } from './engine/documents';
import type { DocumentState } from './engine/documents';
import { loadPython } from './engine/parser';
import { setHost } from './host';
import type { Host } from './host';
import type { Finding, Severity } from './engine/types';
import { configureLocale, t } from './l10n';
import { VERSION } from './version';
import { codeActionsFor } from './code-actions';
import type { CodeActionRequest } from './code-actions';
import { cellCodeActions, fixesWithinCell, NOTEBOOK_DOCUMENT_SYNC, NotebookSync, programCodeActionParams, routeCellRequests } from './notebooks';
import { EditorConfiguration } from './config/editor';
import { FEATURES } from './features';
import { FIX_ALL_KIND } from './features/fix-all';
import { cachedLocalGpus, resolveGpuSetting } from './features/gpu-target';
import type { ServerContext } from './features/context';
import { Commands, DEFAULT_SETTINGS, DIAGNOSTIC_SOURCE, normalizeSettings, ruleDocUrl } from './protocol';
import type { Settings } from './protocol';

const SEVERITY: Record<Severity, DiagnosticSeverity> = {
  error: DiagnosticSeverity.Error,
  warning: DiagnosticSeverity.Warning,
  information: DiagnosticSeverity.Information,
  hint: DiagnosticSeverity.Hint,
};

/**
 * A finding as an LSP diagnostic; `range` puts it elsewhere (a notebook cell). Its fixes stay on the server (see
 * code-actions.ts): with them, a long script's diagnostics were a third larger, and each keystroke sent them all.
 * Nor does it carry `data`: a code action finds its fixes by `code` and range, which every client sends back, and a
 * `data` repeating the code was 26 of each diagnostic's 500 bytes (18 KB of every keystroke's message at 20,000 lines).
 */
export function toDiagnostic(finding: Finding, locale?: string, range: Diagnostic['range'] = finding.range): Diagnostic {
  return {
    range,
    severity: SEVERITY[finding.severity],
    code: finding.code,
    codeDescription: { href: ruleDocUrl(finding.code, locale) },
    source: DIAGNOSTIC_SOURCE,
    message: finding.message,
  };
}

/**
 * A diagnostic that nothing can change (its range copied from the finding's): the Node server's encoder
 * (diagnostics-encoder.ts) writes a frozen diagnostic's JSON once and reuses it while it is published.
 */
function frozenDiagnostic(diagnostic: Diagnostic): Diagnostic {
  const { start, end } = diagnostic.range;
  const range = Object.freeze({ start: Object.freeze({ ...start }), end: Object.freeze({ ...end }) });
  if (diagnostic.codeDescription) Object.freeze(diagnostic.codeDescription);
  return Object.freeze({ ...diagnostic, range });
}

/** The code action kinds the server offers (quick fixes, refactorings, fix-all on save). */
const CODE_ACTION_KINDS: string[] = [CodeActionKind.QuickFix, CodeActionKind.RefactorRewrite, FIX_ALL_KIND];

/** Which rules run and how, as a string: cached findings are reused only under the same. */
function optionsKey(options: AnalysisOptions): string {
  return JSON.stringify([options.select, options.ignore, options.severity]);
}

/** The leak sizes the findings of OOM101 and OOM104 are written with: a change analyses only their statements again. */
function sizesKey(options: AnalysisOptions): string {
  return JSON.stringify([options.keptBytes?.('graph'), options.keptBytes?.('output')]);
}

/**
 * How long one slice of a document's statement facts may run before other work gets its turn: an edit that
 * arrives while one runs waits for it (a 20,000-line script's facts take a few hundred milliseconds in all).
 */
const FACTS_SLICE_MS = 2;

/**
 * How long a document goes without a change before its pending facts are computed: not while the user types (a
 * keystroke would wait behind each slice), since an edit computes the facts it needs first (factsBeforeChange).
 */
const FACTS_AFTER_IDLE_MS = 50;

/**
 * How long a document not edited since it was opened keeps its tree-sitter tree after its diagnostics are out: its
 * first edit re-parses incrementally, and then the tree goes (DocumentStore.releaseUneditedTree) unless it is edited.
 */
const RELEASE_UNEDITED_TREE_AFTER_MS = 10_000;

/** How long after the last document closed its memory is collected. */
const RELEASE_MEMORY_AFTER_MS = 500;

/**
 * How long the server goes without an analysis before it collects what the last burst of them left (collectWhenIdle):
 * longer than a pause between keystrokes, so that typing never waits for it.
 */
const COLLECT_WHEN_IDLE_AFTER_MS = 2_000;

// A web worker has no environment (scripts/build.mjs defines process.env as empty there).
const TRACE_ANALYSIS = process.env.OOMGUARD_TRACE_ANALYSIS === '1';

export function startServer(connection: Connection, host: Host): void {
  setHost(host);
  const documents = new DocumentStore();
  /** Per-document queue: LSP changes must be applied one after another, each on the tree of the last. */
  const queues = new Map<string, Promise<unknown>>();
  const pending = new Map<string, Disposable>();
  /** Per document: the settings as the editor gives them, and with `oomguard.gpu` resolved (settingsFor). */
  const editorSettingsCache = new Map<string, Promise<Settings>>();
  const settingsCache = new Map<string, Promise<Settings>>();
  let canPullConfiguration = false;
  let initialSettings: Settings = DEFAULT_SETTINGS;
  let clientLocale: string | undefined;
  // pyproject.toml's [tool.oomguard] under the settings; a broken file is reported once, then the defaults apply.
  const editorConfig = new EditorConfiguration((message) => {
    connection.console.error(message);
    void connection.window.showWarningMessage(message);
  }, (message) => connection.console.info(message));
  /** Open Jupyter notebooks: each one's code cells are one program, a document of the store under the notebook's URI. */
  const notebooks = new NotebookSync({
    enqueue: (uri, work) => void enqueue(uri, work),
    schedule: (uri) => schedule(uri),
    // In the queue, so that an analysis already queued for the old layout cannot put its cache back afterwards.
    layoutChanged: (uri) => void enqueue(uri, async () => {
      analysisCaches.delete(uri);
      pendingFacts.delete(uri);
    }),
    open: (uri, version, text) => documents.open(uri, version, text),
    change: (uri, version, changes) => {
      factsBeforeChange(uri);
      return documents.change(uri, version, changes);
    },
    closed: (uri, cells) => forget(uri, cells),
  });
  const context: ServerContext = {
    // CodeLens, hovers and the estimate asked of a notebook cell are answered from the notebook's program.
    connection: routeCellRequests(connection, notebooks),
    documents,
    ready: async (uri) => {
      await queues.get(uri);
      return documents.get(uri);
    },
    modelOf: (state) => documents.modelOf(state),
    settingsFor: (uri) => settingsFor(uri),
    locale: () => clientLocale,
    openDocuments: () => [...queues.keys()].filter((uri) => documents.get(uri) !== undefined),
    reanalyze: (uri) => schedule(uri),
    analysisOptionsFor: async (uri) => documentOptions(uri, await editorSettingsFor(uri)),
  };

  /** Drops a closed document (or notebook program) and clears its diagnostics (a notebook's on each of its cells). */
  const forget = (uri: string, cells?: readonly string[]) => {
    pending.get(uri)?.dispose();
    pending.delete(uri);
    // Its scheduled analysis will not run.
    analysisDone(uri);
    releaseTreeTimers.get(uri)?.dispose();
    releaseTreeTimers.delete(uri);
    for (const feature of FEATURES) feature.closed?.(uri);
    void enqueue(uri, async () => {
      documents.close(uri);
      analysisCaches.delete(uri);
      pendingFacts.delete(uri);
      published.delete(uri);
      editorSettingsCache.delete(uri);
      settingsCache.delete(uri);
      queues.delete(uri);
      for (const target of cells ?? [uri]) await connection.sendDiagnostics({ uri: target, diagnostics: [] });
      releaseMemorySoon();
    });
  };

  /** Once documents stop closing: their memory goes back (one collection after closing many at once). */
  let releaseTimer: Disposable | undefined;
  const releaseMemorySoon = () => {
    if (!host.collectGarbage) return;
    releaseTimer?.dispose();
    releaseTimer = RAL().timer.setTimeout(() => {
      releaseTimer = undefined;
      host.collectGarbage?.(true);
    }, RELEASE_MEMORY_AFTER_MS);
  };

  /**
   * Once no analysis has run for a while: one full collection (not compacting: typing may resume meanwhile). Each
   * keystroke leaves its old text, copy and findings in the old generation, which V8 collects only once the heap has
   * grown by half; an open leaves its parse's and first analysis's garbage. A 5,000-line script after 400 edits had
   * 100 to 136 MiB resident, by where V8 happened to be in that cycle.
   */
  let idleCollectionTimer: Disposable | undefined;
  const collectWhenIdle = () => {
    if (!host.collectGarbage) return;
    idleCollectionTimer?.dispose();
    idleCollectionTimer = RAL().timer.setTimeout(() => {
      idleCollectionTimer = undefined;
      host.collectGarbage?.(false);
    }, COLLECT_WHEN_IDLE_AFTER_MS);
  };

  const enqueue = (uri: string, work: () => Promise<unknown>) => {
    const next = (queues.get(uri) ?? Promise.resolve()).then(work, work);
    queues.set(uri, next.catch(() => undefined));
    return next;
  };

  /** The settings without the GPU resolved: all that diagnostics read (`auto` waits for nvidia-smi, which they must not). */
  const editorSettingsFor = (uri: string): Promise<Settings> => {
    if (!canPullConfiguration) return Promise.resolve(initialSettings);
    let cached = editorSettingsCache.get(uri);
    if (!cached) {
      cached = connection.workspace
        .getConfiguration({ scopeUri: uri, section: 'oomguard' })
        .then(normalizeSettings, () => initialSettings);
      editorSettingsCache.set(uri, cached);
    }
    return cached;
  };

  const settingsFor = (uri: string): Promise<Settings> => {
    if (!canPullConfiguration) return withGpuTarget(initialSettings);
    let cached = settingsCache.get(uri);
    if (!cached) {
      cached = editorSettingsFor(uri).then(withGpuTarget);
      settingsCache.set(uri, cached);
    }
    return cached;
  };

  /** What the user was already told about the GPU setting: each warning once per session, not once per file. */
  const toldAboutGpu = new Set<string>();
  /** Settings with `oomguard.gpu` resolved to the GPU to check against (auto: nvidia-smi; custom: customGpuMemory). */
  const withGpuTarget = async (settings: Settings): Promise<Settings> => {
    const target = await resolveGpuSetting(settings.gpu, settings.customGpuMemory, cachedLocalGpus);
    for (const [message, warn] of [[target.warning, true], [target.info, false]] as const) {
      if (!message || toldAboutGpu.has(message)) continue;
      toldAboutGpu.add(message);
      if (warn) {
        connection.console.warn(message);
        void connection.window.showWarningMessage(message);
      } else connection.console.info(message);
    }
    return target.name ? { ...settings, gpu: target.name } : settings;
  };

  /** Per document, what the last analysis found per top-level statement (see engine/incremental.ts). */
  const analysisCaches = new Map<string, AnalysisCache>();
  /**
   * Per document, the analysis whose statement facts are still being computed (a slice at a time after a full
   * analysis is published), with the version it is of: the facts read the statements as that version has them.
   */
  const pendingFacts = new Map<string, { version: number; model: SemanticModel; cache: AnalysisCache }>();

  /** Computes the facts of `cache` between other work: each slice is a turn of the document's queue. */
  const completeFactsLater = (uri: string, version: number, model: SemanticModel, cache: AnalysisCache) => {
    const work = { version, model, cache };
    pendingFacts.set(uri, work);
    const slice = async () => {
      if (pendingFacts.get(uri) !== work) return;
      if (documents.get(uri)?.version !== version) {
        pendingFacts.delete(uri);
        return;
      }
      if (completeSomeFacts(model, cache, FACTS_SLICE_MS)) pendingFacts.delete(uri);
      else RAL().timer.setImmediate(queueSlice);
    };
    // Not for a document closed (or analysed again) meanwhile: a closed one's queue would start again, and stay.
    const queueSlice = () => {
      if (pendingFacts.get(uri) === work) void enqueue(uri, slice);
    };
    RAL().timer.setTimeout(queueSlice, FACTS_AFTER_IDLE_MS);
  };

  /**
   * Before a change is applied (in the document's queue): the facts that the next analysis compares, of the
   * statements the one change touches (and those that mention a name they spell), or of all statements where the
   * change is not one range (several changes at once, a whole-text replacement, a notebook's cells).
   */
  const factsBeforeChange = (uri: string, change?: Required<TextChange>) => {
    const work = pendingFacts.get(uri);
    if (!work) return;
    const state = documents.get(uri);
    if (!state || state.version !== work.version) {
      pendingFacts.delete(uri);
      return;
    }
    if (change) {
      const { start, end } = change.range;
      // The model reads the document's text unless a parse was recovered: then only the rows are known.
      if (work.model.root.content === state.content) {
        const startIndex = offsetAt(state.content, state.lineStarts, start);
        const endIndex = offsetAt(state.content, state.lineStarts, end);
        completeFactsForEdit(work.model, work.cache, { fromRow: start.line, toRow: end.line, startIndex, endIndex, text: change.text });
      } else completeFactsOnRows(work.model, work.cache, start.line, end.line);
    } else {
      completeFacts(work.model, work.cache);
      pendingFacts.delete(uri);
    }
  };
  /**
   * Per document, the findings last published and the version they are of (code actions take their fixes here), with
   * the diagnostics they were sent as on the document's URI.
   */
  const published = new Map<string, { version: number; findings: readonly Finding[]; diagnostics?: readonly Diagnostic[] }>();

  /**
   * The LSP form of each finding sent on its document's URI. An edit keeps most findings (the same objects, see
   * engine/incremental.ts), and a long script has hundreds: each is made once, not once per keystroke.
   */
  const diagnosticOf = new WeakMap<Finding, Diagnostic>();
  const documentDiagnostic = (finding: Finding) => {
    let diagnostic = diagnosticOf.get(finding);
    if (!diagnostic) diagnosticOf.set(finding, (diagnostic = frozenDiagnostic(toDiagnostic(finding, clientLocale))));
    return diagnostic;
  };

  /**
   * The diagnostics of a document's findings: the last ones sent where the findings are the same at the start and at
   * the end of the list (a keystroke changes a few in the middle of hundreds).
   */
  const documentDiagnostics = (findings: readonly Finding[], last: { findings: readonly Finding[]; diagnostics?: readonly Diagnostic[] } | undefined): Diagnostic[] => {
    const old = last?.diagnostics ? last.findings : [];
    let prefix = 0;
    while (prefix < findings.length && prefix < old.length && findings[prefix] === old[prefix]) prefix++;
    let suffix = 0;
    while (suffix < findings.length - prefix && suffix < old.length - prefix && findings[findings.length - 1 - suffix] === old[old.length - 1 - suffix]) suffix++;
    const diagnostics = last?.diagnostics?.slice(0, prefix) ?? [];
    for (let i = prefix; i < findings.length - suffix; i++) diagnostics.push(documentDiagnostic(findings[i]!));
    for (let k = suffix; k > 0; k--) diagnostics.push(last!.diagnostics![old.length - k]!);
    return diagnostics;
  };

  /** Sends the findings of a document: on its URI, or for a notebook on each of its Python cells. */
  const send = async (state: DocumentState, findings: readonly Finding[]) => {
    if (!notebooks.has(state.uri)) {
      const diagnostics = documentDiagnostics(findings, published.get(state.uri));
      published.set(state.uri, { version: state.version, findings, diagnostics });
      await connection.sendDiagnostics({ uri: state.uri, version: state.version, diagnostics });
      return;
    }
    published.set(state.uri, { version: state.version, findings });
    for (const cell of notebooks.cellDiagnostics(state.uri, findings, (finding, range) => toDiagnostic(finding, clientLocale, range))) {
      await connection.sendDiagnostics(cell);
    }
  };

  /** The rule selection of a document, with a notebook's cell rows (OOM118 reads them). */
  const documentOptions = async (uri: string, settings: Settings): Promise<AnalysisOptions> => {
    const cells = notebooks.cellRowsOf(uri);
    return { ...(await editorConfig.optionsFor(uri, settings)), ...(cells ? { notebookCells: cells } : {}) };
  };

  const publish = async (state: DocumentState) => {
    const version = state.version;
    // The GPU target is resolved alongside (its warning is due now), not waited for.
    settingsFor(state.uri).catch(() => undefined);
    const settings = await editorSettingsFor(state.uri);
    const ruleOptions = await documentOptions(state.uri, settings);
    // A newer version arrived while settings and pyproject.toml were read: its own run will publish.
    if (documents.get(state.uri)?.version !== version) return;
    // A notebook's cells already changed again: the program of that change is queued and will publish.
    if (notebooks.has(state.uri) && notebooks.versionOf(state.uri) !== version) return;
    if (!settings.enable) {
      await send(state, []);
      return;
    }
    if (state.content.length > MAX_ANALYZED_CHARACTERS) {
      connection.console.info(`${state.uri}: ${tooLargeMessage(state.content.length)}`);
      await send(state, []);
      return;
    }
    const model = documents.modelOf(state);
    if (!model) return;
    const options: AnalysisOptions = {
      ...ruleOptions,
      ...Object.assign({}, ...FEATURES.map((feature) => feature.analysisOptions?.(state, settings) ?? {})),
      onRuleError: (code, error) =>
        connection.console.error(t('Rule {0} failed on {1}: {2}', code, state.uri, error instanceof Error ? error.stack ?? error.message : String(error))),
    };
    const analysis = analyzeIncrementally(model, state.content, options, optionsKey(options), analysisCaches.get(state.uri), sizesKey(options), documents.indentUnitOf(state));
    // For `npm run bench`: which path each analysis took.
    if (TRACE_ANALYSIS) connection.console.log(`analysed ${analysis.analysedStatements} of ${model.root.children.length} statements`);
    try {
      await send(state, analysis.findings);
    } finally {
      // Once the diagnostics are out (a change waits in the queue meanwhile): what the next edit needs to reuse these
      // findings (a full analysis builds it only now; an incremental one has changed the last version's in place).
      analysisCaches.set(state.uri, analysis.cache);
    }
    // Their facts, a slice at a time (a long file's take hundreds of milliseconds, which the first keystroke after
    // opening it must not wait for).
    completeFactsLater(state.uri, state.version, model, analysis.cache);
    if (!state.edited && state.tree) {
      // A document opened among others may have had to parse again (its tree was let go before its first analysis).
      documents.releaseOlderUneditedTrees();
      if (state.tree) releaseTreeWhenIdle(state);
    }
    for (const feature of FEATURES) feature.published?.(state);
    collectWhenIdle();
  };

  /**
   * Per document, the timer that lets its tree go once unedited a while: cleared when the document closes, as the
   * timer holds the document (tree copy, model, findings) until it fires, past the collection that follows the close.
   */
  const releaseTreeTimers = new Map<string, Disposable>();
  /** Lets go of an unedited document's tree once it has stayed unedited a while (in its queue, after other work). */
  const releaseTreeWhenIdle = (state: DocumentState) => {
    releaseTreeTimers.get(state.uri)?.dispose();
    releaseTreeTimers.set(state.uri, RAL().timer.setTimeout(() => {
      releaseTreeTimers.delete(state.uri);
      // Reopened as another state, or edited, in the meantime: nothing to do (and no queue to start for it).
      if (documents.get(state.uri) !== state || state.edited) return;
      void enqueue(state.uri, async () => {
        if (documents.get(state.uri) === state) documents.releaseUneditedTree(state);
      });
    }, RELEASE_UNEDITED_TREE_AFTER_MS));
  };

  /**
   * The documents whose analysis is scheduled or running: meanwhile the estimate worker pauses its estimate, so that
   * it never takes the CPU from the diagnostics (busy-signal.ts).
   */
  const analysing = new Set<string>();
  const analysisAwaited = (uri: string) => {
    analysing.add(uri);
    host.estimateWorker?.serverBusy(true);
  };
  const analysisDone = (uri: string) => {
    // Another change came meanwhile: its analysis is scheduled.
    if (pending.has(uri)) return;
    analysing.delete(uri);
    if (analysing.size === 0) host.estimateWorker?.serverBusy(false);
  };

  /** Queues the analysis of a document's current version now (one that was scheduled is not run again). */
  const analyseNow = (uri: string) => {
    pending.get(uri)?.dispose();
    pending.delete(uri);
    return enqueue(uri, async () => {
      try {
        const state = documents.get(uri);
        if (state) await publish(state);
      } finally {
        analysisDone(uri);
      }
    });
  };

  /** The document once its current version is analysed (an analysis scheduled but not started runs now). */
  const flushed = async (uri: string) => {
    if (pending.has(uri)) void analyseNow(uri);
    return context.ready(uri);
  };

  /** Re-analysis runs once the burst of changes read together has been applied (coalesced, not timed). */
  const schedule = (uri: string) => {
    analysisAwaited(uri);
    pending.get(uri)?.dispose();
    // setImmediate in Node (after the messages already read); a microtask in a web worker.
    pending.set(uri, RAL().timer.setImmediate(() => void analyseNow(uri)));
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
        // LSP 3.17: the Python cells of Jupyter notebooks, synced as notebooks (clients without it ignore this).
        notebookDocumentSync: NOTEBOOK_DOCUMENT_SYNC,
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
    editorSettingsCache.clear();
    settingsCache.clear();
    const settings = (change.settings as { oomguard?: unknown } | undefined)?.oomguard;
    if (settings) initialSettings = normalizeSettings(settings);
    for (const uri of queues.keys()) if (documents.get(uri)) schedule(uri);
  });

  connection.onDidOpenTextDocument(({ textDocument }) => {
    // Asked before the parse, so that the editor answers while the server parses.
    settingsFor(textDocument.uri).catch(() => undefined);
    void enqueue(textDocument.uri, () => documents.open(textDocument.uri, textDocument.version, textDocument.text));
    schedule(textDocument.uri);
  });

  connection.onDidChangeTextDocument(({ textDocument, contentChanges }) => {
    // A change with a negative or reversed range would corrupt the document: refused, and said so.
    if (typeof textDocument?.uri !== 'string' || !validChanges(contentChanges)) {
      connection.console.error(t('Ignored a didChange with an invalid range for {0}', String(textDocument?.uri)));
      return;
    }
    void enqueue(textDocument.uri, () => {
      const only = contentChanges.length === 1 && 'range' in contentChanges[0]! ? contentChanges[0] : undefined;
      factsBeforeChange(textDocument.uri, only);
      return documents.change(textDocument.uri, textDocument.version, contentChanges);
    });
    schedule(textDocument.uri);
  });

  connection.onDidCloseTextDocument(({ textDocument }) => forget(textDocument.uri));

  notebooks.listen(connection);

  const codeActions = async (params: CodeActionParams, fixFilter?: CodeActionRequest['fixFilter']): Promise<CodeAction[]> => {
    const uri = params.textDocument.uri;
    const state = await flushed(uri);
    if (!state) return [];
    // Fix-all re-reads the findings from the shared model when none were published for this version, so it needs
    // the same options as the diagnostics.
    const analysisOptions = await documentOptions(state.uri, await editorSettingsFor(state.uri));
    const last = published.get(uri);
    const findings = last?.version === state.version ? last.findings : undefined;
    return codeActionsFor({ text: state.text, lineStarts: state.lineStarts, params, model: documents.modelOf(state), analysisOptions, findings, fixFilter });
  };

  connection.onCodeAction(async (params: CodeActionParams): Promise<CodeAction[] | ResponseError<void>> => {
    const invalid = invalidParams('textDocument/codeAction', params, 'range');
    if (invalid) return invalid;
    const notebookUri = notebooks.route(params.textDocument.uri)?.notebookUri;
    if (!notebookUri) return codeActions(params);
    // A notebook cell: the program answers, and its edits go to the cells they touch. The cells' layout is read
    // once the program's pending analysis has run, so that the findings and the layout are of the same version.
    await flushed(notebookUri);
    const route = notebooks.route(params.textDocument.uri);
    if (!route) return [];
    const asked = programCodeActionParams(params, route);
    return cellCodeActions(await codeActions(asked, fixesWithinCell(route)), route, params, asked);
  });

  for (const feature of FEATURES) feature.register(context);

  connection.onExecuteCommand(async ({ command, arguments: args }) => {
    if (command === Commands.showDocumentation && typeof args?.[0] === 'string') {
      await connection.window.showDocument({ uri: ruleDocUrl(args[0], clientLocale), external: true });
    }
  });

  connection.listen();
}
