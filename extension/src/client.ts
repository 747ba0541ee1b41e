// The VS Code client: starts the language server, shows its state in the status bar and an output channel,
// and registers the extension's commands from one table. The same client runs in VS Code's Node extension host
// (node.ts: the server as a Node process) and in a browser's (web/extension.ts: the server in a web worker); each
// entry point says only how to start its server.
import * as vscode from 'vscode';
import { State } from 'vscode-languageclient';
import type { BaseLanguageClient, LanguageClientOptions } from 'vscode-languageclient';
import { EXPLAIN_OOM_COMMAND, explainOomCommand, registerExplainProviders } from './explain';
import { SHOW_MEMORY_ESTIMATE_COMMAND } from '../../server/src/protocol';
import { EstimateStatus } from './estimate-status';
import { MemoryPanel, PANEL_VIEW_TYPE } from './panel/memory-panel';
import { ruleDocMiddleware, showRuleDoc, SHOW_RULE_DOC_COMMAND } from './rule-docs';
import { documentSelector } from './served';

/** Makes the language client of one entry point from the options both share. */
export type ClientFactory = (context: vscode.ExtensionContext, options: LanguageClientOptions, name: string) => Promise<BaseLanguageClient>;

/** Where the server runs, for the output channel's start line: the server bundle and the runtime (Node's version, or the browser). */
export type ServerDescription = () => { server: string; runtime: string };

let client: BaseLanguageClient | undefined;
let statusItem: vscode.StatusBarItem | undefined;
let output: vscode.LogOutputChannel | undefined;
let makeClient: ClientFactory | undefined;
let describeServer: ServerDescription | undefined;
let estimateStatus: EstimateStatus | undefined;

function clientOptions(context: vscode.ExtensionContext): LanguageClientOptions {
  return {
    documentSelector: documentSelector(),
    outputChannel: output,
    middleware: ruleDocMiddleware(context.extensionUri),
    synchronize: { configurationSection: 'oomguard' },
    initializationOptions: { locale: vscode.env.language },
  };
}

function showState(state: State): void {
  if (!statusItem) return;
  switch (state) {
    case State.Running:
      statusItem.text = '$(pulse) OOM Guard';
      statusItem.tooltip = vscode.l10n.t('OOM Guard is checking Python files for GPU memory leaks. Click for its menu.');
      statusItem.backgroundColor = undefined;
      break;
    case State.Starting:
      statusItem.text = '$(sync~spin) OOM Guard';
      statusItem.tooltip = vscode.l10n.t('OOM Guard is starting.');
      statusItem.backgroundColor = undefined;
      break;
    case State.Stopped:
      statusItem.text = '$(error) OOM Guard';
      statusItem.tooltip = vscode.l10n.t('The OOM Guard server has stopped. Click for its menu (Restart Server, Show Output).');
      statusItem.backgroundColor = new vscode.ThemeColor('statusBarItem.errorBackground');
      break;
  }
}

async function startClient(context: vscode.ExtensionContext): Promise<void> {
  try {
    client = await makeClient!(context, clientOptions(context), vscode.l10n.t('OOM Guard'));
  } catch (error) {
    output?.error(vscode.l10n.t('The OOM Guard server failed to start: {0}', String(error)));
    showState(State.Stopped);
    return;
  }
  context.subscriptions.push(client.onDidChangeState(({ newState }) => {
    showState(newState);
    // The first Python file was opened (or restored by a reload) before the server ran: ask for its estimate now.
    if (newState === State.Running) estimateStatus?.schedule(0);
  }));
  showState(State.Starting);
  try {
    await client.start();
    const info = client.initializeResult?.serverInfo;
    const where = describeServer?.() ?? { server: '?', runtime: '?' };
    // The first thing to read when something looks wrong: which build runs, from where. The server adds, per
    // project, which pyproject.toml it read.
    output?.info(vscode.l10n.t('OOM Guard {0} started: server {1} (version {2}) on {3}, GPU setting "{4}".',
      String((context.extension.packageJSON as { version?: unknown }).version ?? '?'), where.server, info?.version ?? '?', where.runtime,
      vscode.workspace.getConfiguration('oomguard').get<string>('gpu') ?? ''));
  } catch (error) {
    output?.error(vscode.l10n.t('The OOM Guard server failed to start: {0}', String(error)));
    showState(State.Stopped);
  }
}

async function restartServer(context: vscode.ExtensionContext): Promise<void> {
  if (client) {
    const stopping = client;
    client = undefined;
    await stopping.stop().catch((error: unknown) => output?.appendLine(String(error)));
  }
  await startClient(context);
}

/** What the status item's click offers, as Ruff's and ESLint's items do: one menu, nothing happens unasked. */
async function showMenu(): Promise<void> {
  interface MenuItem extends vscode.QuickPickItem {
    command: string;
    args?: unknown[];
  }
  const running = client?.isRunning() ?? false;
  const items: MenuItem[] = [
    { label: `$(output) ${vscode.l10n.t('Show Output')}`, description: vscode.l10n.t('the server log and its trace'), command: 'oomguard.showOutput' },
    { label: `$(server) ${vscode.l10n.t('Show Memory Estimate')}`, description: vscode.l10n.t('the panel for the active Python file'), command: SHOW_MEMORY_ESTIMATE_COMMAND },
    { label: `$(debug-restart) ${vscode.l10n.t('Restart Server')}`, description: running ? '' : vscode.l10n.t('the server is not running'), command: 'oomguard.restartServer' },
    { label: `$(settings-gear) ${vscode.l10n.t('Open Settings')}`, description: 'oomguard.*', command: 'workbench.action.openSettings', args: ['@ext:oomguard.oomguard'] },
  ];
  const picked = await vscode.window.showQuickPick(items, { title: vscode.l10n.t('OOM Guard'), placeHolder: vscode.l10n.t('OOM Guard: what do you want to do?') });
  if (picked) await vscode.commands.executeCommand(picked.command, ...(picked.args ?? []));
}

/** Every command of the extension, registered under the `oomguard.` prefix. */
function commands(context: vscode.ExtensionContext): Record<string, (...args: unknown[]) => unknown> {
  return {
    'oomguard.showMenu': showMenu,
    [SHOW_RULE_DOC_COMMAND]: (code?: unknown) => showRuleDoc(context.extensionUri, code),
    'oomguard.restartServer': () => restartServer(context),
    'oomguard.showOutput': () => output?.show(true),
    [EXPLAIN_OOM_COMMAND]: explainOomCommand(() => client),
    // CodeLens passes the document's URI as a string; the command palette passes nothing (the active editor).
    [SHOW_MEMORY_ESTIMATE_COMMAND]: (uri?: unknown) =>
      MemoryPanel.show(context, () => client, typeof uri === 'string' ? vscode.Uri.parse(uri) : uri instanceof vscode.Uri ? uri : undefined),
  };
}

/** Activates the extension with the language client of the entry point (node.ts or web/extension.ts). */
export async function activateWith(context: vscode.ExtensionContext, factory: ClientFactory, describe: ServerDescription): Promise<void> {
  makeClient = factory;
  describeServer = describe;
  output = vscode.window.createOutputChannel(vscode.l10n.t('OOM Guard'), { log: true });
  statusItem = vscode.window.createStatusBarItem('oomguard.status', vscode.StatusBarAlignment.Right, 100);
  statusItem.name = vscode.l10n.t('OOM Guard');
  statusItem.command = 'oomguard.showMenu';
  statusItem.show();
  context.subscriptions.push(output, statusItem);
  context.subscriptions.push(...registerExplainProviders(() => client));
  for (const [id, handler] of Object.entries(commands(context))) {
    context.subscriptions.push(vscode.commands.registerCommand(id, handler));
  }
  context.subscriptions.push(
    vscode.window.registerWebviewPanelSerializer(PANEL_VIEW_TYPE, {
      deserializeWebviewPanel: async (panel, state) => MemoryPanel.revive(panel, context, () => client, state),
    }),
    (estimateStatus = new EstimateStatus(() => client, (uri) => MemoryPanel.refresh(uri))),
  );
  await startClient(context);
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}
