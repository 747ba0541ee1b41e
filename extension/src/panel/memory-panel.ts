// The memory panel: one webview that follows the active Python editor, asks the language server for the estimate
// (with the panel's what-if values) and posts it to the webview. It survives reloads through its serializer.
import * as vscode from 'vscode';
import type { BaseLanguageClient as LanguageClient } from 'vscode-languageclient';
import { isServed } from '../served';
import { baseName } from '../uris';
import { GPU_CATALOG } from '../../../server/src/estimator/catalog/gpus';
import { ESTIMATE_REQUEST, normalizeOverrides, parseWebviewMessage } from '../../../server/src/protocol';
import type { EstimateOverrides, EstimateParams, EstimateResponse, HostToWebview, WebviewToHost } from '../../../server/src/protocol';
import { makeNonce, panelHtml } from './html';
import { webviewStrings } from './strings';

export const PANEL_VIEW_TYPE = 'oomguard.memoryEstimate';


export class MemoryPanel implements vscode.Disposable {
  private static current: MemoryPanel | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  private uri: vscode.Uri | undefined;
  private overrides: EstimateOverrides = {};
  /** Answers to older requests are dropped: only the latest what-if values are shown. */
  private requestSeq = 0;

  /** Opens the panel (or brings it forward) on `uri`, else on the active Python editor. */
  static show(context: vscode.ExtensionContext, getClient: () => LanguageClient | undefined, uri?: vscode.Uri): void {
    const target = uri ?? (isServed(vscode.window.activeTextEditor?.document) ? vscode.window.activeTextEditor.document.uri : undefined);
    if (MemoryPanel.current) {
      MemoryPanel.current.panel.reveal(vscode.ViewColumn.Beside, true);
      if (target) MemoryPanel.current.follow(target);
      return;
    }
    const panel = vscode.window.createWebviewPanel(PANEL_VIEW_TYPE, vscode.l10n.t('Memory Estimate'), { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true }, MemoryPanel.options(context));
    MemoryPanel.current = new MemoryPanel(panel, context, getClient, target, {});
  }

  /** Restores a panel after a window reload, with the document and what-if values it had. */
  static revive(panel: vscode.WebviewPanel, context: vscode.ExtensionContext, getClient: () => LanguageClient | undefined, state: unknown): void {
    const saved = (state ?? {}) as { uri?: unknown; overrides?: unknown };
    let uri: vscode.Uri | undefined;
    try {
      uri = typeof saved.uri === 'string' ? vscode.Uri.parse(saved.uri, true) : undefined;
    } catch {
      uri = undefined;
    }
    panel.webview.options = MemoryPanel.options(context);
    MemoryPanel.current?.dispose();
    MemoryPanel.current = new MemoryPanel(panel, context, getClient, uri, normalizeOverrides(saved.overrides));
  }

  /** Called when the active editor's estimate may have changed (an edit, a setting). */
  static refresh(uri?: vscode.Uri): void {
    const current = MemoryPanel.current;
    if (current && (!uri || current.uri?.toString() === uri.toString())) void current.update();
  }

  private static options(context: vscode.ExtensionContext): vscode.WebviewOptions & vscode.WebviewPanelOptions {
    return {
      enableScripts: true,
      retainContextWhenHidden: false,
      localResourceRoots: [vscode.Uri.joinPath(context.extensionUri, 'dist')],
    };
  }

  private constructor(
    private readonly panel: vscode.WebviewPanel,
    private readonly context: vscode.ExtensionContext,
    private readonly getClient: () => LanguageClient | undefined,
    uri: vscode.Uri | undefined,
    overrides: EstimateOverrides,
  ) {
    this.uri = uri;
    this.overrides = overrides;
    panel.webview.html = this.html();
    this.disposables.push(
      panel.onDidDispose(() => this.dispose()),
      panel.webview.onDidReceiveMessage((raw: unknown) => void this.receive(parseWebviewMessage(raw))),
      vscode.window.onDidChangeActiveTextEditor((editor) => {
        if (editor && isServed(editor.document)) this.follow(editor.document.uri);
      }),
    );
  }

  private html(): string {
    const dist = vscode.Uri.joinPath(this.context.extensionUri, 'dist');
    const webview = this.panel.webview;
    return panelHtml({
      cspSource: webview.cspSource,
      nonce: makeNonce((bytes) => globalThis.crypto.getRandomValues(bytes)),
      scriptUri: webview.asWebviewUri(vscode.Uri.joinPath(dist, 'webview.js')).toString(),
      styleUri: webview.asWebviewUri(vscode.Uri.joinPath(dist, 'webview.css')).toString(),
      lang: vscode.env.language,
      title: vscode.l10n.t('Memory Estimate'),
    });
  }

  private post(message: HostToWebview): void {
    void this.panel.webview.postMessage(message);
  }

  /** Switches to another document; what-if values belong to one script, so they start over. */
  private follow(uri: vscode.Uri): void {
    if (this.uri?.toString() === uri.toString()) return;
    this.uri = uri;
    this.overrides = {};
    void this.update();
  }

  private async receive(message: WebviewToHost | undefined): Promise<void> {
    if (!message) return;
    switch (message.type) {
      case 'ready':
        this.post({ type: 'init', strings: webviewStrings(), gpus: GPU_CATALOG.map((gpu) => ({ name: gpu.name, capacity: gpu.capacity })) });
        await this.update();
        break;
      case 'recompute':
        this.overrides = message.overrides;
        await this.update();
        break;
      case 'reveal':
        await this.reveal(message.line);
        break;
      case 'applySuggestion':
        await this.apply(message.kind, message.line, message.title);
        break;
    }
  }

  private async update(): Promise<void> {
    const uri = this.uri;
    const client = this.getClient();
    if (!uri || !client) {
      this.post({ type: 'noDocument' });
      return;
    }
    const seq = ++this.requestSeq;
    const overrides = this.overrides;
    this.panel.title = vscode.l10n.t('Memory: {0}', baseName(uri));
    try {
      // The server knows only open documents; opening one that is not shown makes the server read it.
      await vscode.workspace.openTextDocument(uri);
      const params: EstimateParams = { textDocument: { uri: uri.toString() }, overrides };
      const response = await client.sendRequest<EstimateResponse>(ESTIMATE_REQUEST, params);
      if (seq !== this.requestSeq) return;
      this.post({ type: 'estimate', fileName: baseName(uri), response, overrides });
    } catch (error) {
      if (seq !== this.requestSeq) return;
      const message = error instanceof Error ? error.message : String(error);
      // The model could not be read: the server says so in the error's data, and the panel asks for its size.
      const unresolved = (error as { data?: { unresolved?: unknown } } | undefined)?.data?.unresolved !== undefined;
      this.post(unresolved ? { type: 'unresolved', text: message } : { type: 'notice', text: vscode.l10n.t('No estimate for this file: {0}', message) });
    }
  }

  private async reveal(line: number): Promise<void> {
    if (!this.uri) return;
    const document = await vscode.workspace.openTextDocument(this.uri);
    const target = Math.min(line, document.lineCount - 1);
    const range = document.lineAt(target).range;
    const shown = vscode.window.visibleTextEditors.find((editor) => editor.document.uri.toString() === document.uri.toString());
    await vscode.window.showTextDocument(document, { viewColumn: shown?.viewColumn ?? vscode.ViewColumn.One, selection: range });
  }

  /**
   * Applies the refactoring (or a leak's quick fix) that makes a suggested change: asks the editor for the code
   * actions of that kind on the line and runs the one with the title the server named.
   */
  private async apply(kind: string, line: number, title: string): Promise<void> {
    if (!this.uri) return;
    const document = await vscode.workspace.openTextDocument(this.uri);
    const range = document.lineAt(Math.min(line, document.lineCount - 1)).range;
    const actions = (await vscode.commands.executeCommand<vscode.CodeAction[]>('vscode.executeCodeActionProvider', this.uri, range, kind)) ?? [];
    const action = actions.find((candidate) => candidate.title === title && (candidate.kind?.value === kind || candidate.kind?.value.startsWith(`${kind}.`)));
    if (!action) {
      this.post({ type: 'notice', text: vscode.l10n.t('This change is not offered as a refactoring here any more (the script changed?): make it by hand, or try it in the what-if controls.') });
      return;
    }
    if (action.edit) await vscode.workspace.applyEdit(action.edit);
    if (action.command) await vscode.commands.executeCommand(action.command.command, ...(action.command.arguments ?? []));
    // The panel has focus, so no editor event follows the edit: ask again now, or the panel keeps the old figures
    // and offers the same change a second time. The client sends the edit's didChange before this request.
    await this.update();
  }

  private disposed = false;

  dispose(): void {
    // panel.dispose() fires onDidDispose, which calls here again.
    if (this.disposed) return;
    this.disposed = true;
    if (MemoryPanel.current === this) MemoryPanel.current = undefined;
    for (const disposable of this.disposables.splice(0)) disposable.dispose();
    this.panel.dispose();
  }
}
