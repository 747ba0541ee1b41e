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
import { documentSelector } from './served';

/** Makes the language client of one entry point from the options both share. */
export type ClientFactory = (context: vscode.ExtensionContext, options: LanguageClientOptions, name: string) => Promise<BaseLanguageClient>;

let client: BaseLanguageClient | undefined;
let statusItem: vscode.StatusBarItem | undefined;
let output: vscode.LogOutputChannel | undefined;
let makeClient: ClientFactory | undefined;

function clientOptions(): LanguageClientOptions {
  return {
    documentSelector: documentSelector(),
    outputChannel: output,
    synchronize: { configurationSection: 'oomguard' },
    initializationOptions: { locale: vscode.env.language },
  };
}

function showState(state: State): void {
  if (!statusItem) return;
  switch (state) {
    case State.Running:
      statusItem.text = '$(pulse) OOM Guard';
      statusItem.tooltip = vscode.l10n.t('OOM Guard is checking Python files for GPU memory leaks. Click to restart the server.');
      statusItem.backgroundColor = undefined;
      break;
    case State.Starting:
      statusItem.text = '$(sync~spin) OOM Guard';
      statusItem.tooltip = vscode.l10n.t('OOM Guard is starting.');
      statusItem.backgroundColor = undefined;
      break;
    case State.Stopped:
      statusItem.text = '$(error) OOM Guard';
      statusItem.tooltip = vscode.l10n.t('The OOM Guard server has stopped. Click to restart it.');
      statusItem.backgroundColor = new vscode.ThemeColor('statusBarItem.errorBackground');
      break;
  }
}

async function startClient(context: vscode.ExtensionContext): Promise<void> {
  try {
    client = await makeClient!(context, clientOptions(), vscode.l10n.t('OOM Guard'));
  } catch (error) {
    output?.appendLine(vscode.l10n.t('The OOM Guard server failed to start: {0}', String(error)));
    showState(State.Stopped);
    return;
  }
  context.subscriptions.push(client.onDidChangeState(({ newState }) => showState(newState)));
  showState(State.Starting);
  try {
    await client.start();
  } catch (error) {
    output?.appendLine(vscode.l10n.t('The OOM Guard server failed to start: {0}', String(error)));
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

/** Every command of the extension, registered under the `oomguard.` prefix. */
function commands(context: vscode.ExtensionContext): Record<string, (...args: unknown[]) => unknown> {
  return {
    'oomguard.restartServer': () => restartServer(context),
    'oomguard.showOutput': () => output?.show(true),
    [EXPLAIN_OOM_COMMAND]: explainOomCommand(() => client),
    // CodeLens passes the document's URI as a string; the command palette passes nothing (the active editor).
    [SHOW_MEMORY_ESTIMATE_COMMAND]: (uri?: unknown) =>
      MemoryPanel.show(context, () => client, typeof uri === 'string' ? vscode.Uri.parse(uri) : uri instanceof vscode.Uri ? uri : undefined),
  };
}

/** Activates the extension with the language client of the entry point (node.ts or web/extension.ts). */
export async function activateWith(context: vscode.ExtensionContext, factory: ClientFactory): Promise<void> {
  makeClient = factory;
  output = vscode.window.createOutputChannel(vscode.l10n.t('OOM Guard'), { log: true });
  statusItem = vscode.window.createStatusBarItem('oomguard.status', vscode.StatusBarAlignment.Right, 100);
  statusItem.name = vscode.l10n.t('OOM Guard');
  statusItem.command = 'oomguard.restartServer';
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
    new EstimateStatus(() => client, (uri) => MemoryPanel.refresh(uri)),
  );
  await startClient(context);
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}
