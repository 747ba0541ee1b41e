// The status bar item with the estimate of the active Python script on the GPU of the `oomguard.gpu` setting.
import * as vscode from 'vscode';
import { ResponseError, type BaseLanguageClient as LanguageClient } from 'vscode-languageclient';
import { isServed } from './served';
import { baseName } from './uris';
import { formatBytes } from '../../server/src/engine/bytes';
import { ESTIMATE_REQUEST, SHOW_MEMORY_ESTIMATE_COMMAND } from '../../server/src/protocol';
import type { EstimateParams, EstimateResponse } from '../../server/src/protocol';

/** Edits arrive per keystroke; the estimate is asked for once typing pauses. */
const DEBOUNCE_MS = 400;

export class EstimateStatus implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('oomguard.estimate', vscode.StatusBarAlignment.Right, 99);
  private readonly disposables: vscode.Disposable[] = [this.item];
  private timer: NodeJS.Timeout | undefined;
  private seq = 0;
  /**
   * The Python document the item speaks for: the active editor's, kept while something that is not a text editor
   * (the memory panel, the output) has focus, as Pylance and Ruff keep their items while a webview is focused.
   */
  private document: vscode.TextDocument | undefined;

  constructor(private readonly getClient: () => LanguageClient | undefined, private readonly onChange: (uri: vscode.Uri) => void) {
    this.item.name = vscode.l10n.t('OOM Guard memory estimate');
    this.item.command = SHOW_MEMORY_ESTIMATE_COMMAND;
    this.document = vscode.window.activeTextEditor?.document;
    this.disposables.push(
      vscode.window.onDidChangeActiveTextEditor((editor) => {
        // No editor: focus went to a panel or webview; the last document stays. Another editor: follow it.
        if (editor) this.document = editor.document;
        this.schedule(0);
      }),
      vscode.workspace.onDidChangeTextDocument((event) => {
        if (event.document === this.document) this.schedule(DEBOUNCE_MS);
      }),
      vscode.workspace.onDidCloseTextDocument((document) => {
        if (document === this.document) {
          this.document = undefined;
          this.schedule(0);
        }
      }),
      vscode.workspace.onDidChangeConfiguration((event) => {
        if (event.affectsConfiguration('oomguard')) this.schedule(DEBOUNCE_MS);
      }),
    );
  }

  schedule(delay: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.update(), delay);
  }

  private async update(): Promise<void> {
    const document = this.document;
    const client = this.getClient();
    if (!isServed(document) || !client?.isRunning()) {
      this.item.hide();
      return;
    }
    const seq = ++this.seq;
    try {
      const params: EstimateParams = { textDocument: { uri: document.uri.toString() } };
      const response = await client.sendRequest<EstimateResponse>(ESTIMATE_REQUEST, params);
      if (seq !== this.seq) return;
      const gpu = response.gpu;
      const bad = response.fits === false;
      this.item.text = `${bad ? '$(warning)' : '$(server)'} ${formatBytes(response.total)}${gpu ? ` / ${gpu.name}` : ''}`;
      this.item.tooltip = gpu
        ? bad
          ? vscode.l10n.t('{0}: about {1} at the peak; does not fit {2} ({3}). Click for the memory panel.', baseName(document.uri), formatBytes(response.total), gpu.name, formatBytes(gpu.capacity))
          : vscode.l10n.t('{0}: about {1} at the peak; fits {2} ({3}). Click for the memory panel.', baseName(document.uri), formatBytes(response.total), gpu.name, formatBytes(gpu.capacity))
        : vscode.l10n.t('{0}: about {1} at the peak. Click for the memory panel.', baseName(document.uri), formatBytes(response.total));
      const growth = response.growth;
      if (growth) {
        this.item.text += ` $(arrow-up) ${formatBytes(growth.bytesPerBatch)}`;
        this.item.tooltip += '\n' + (growth.batchesUntilFull === null
          ? vscode.l10n.t('Line {0} keeps {1} more every batch.', growth.line, formatBytes(growth.bytesPerBatch))
          : vscode.l10n.t('Line {0} keeps {1} more every batch: out of memory after about {2} batches.', growth.line, formatBytes(growth.bytesPerBatch), growth.batchesUntilFull));
        if (growth.batches !== undefined && growth.keptAfterBatches !== undefined) {
          this.item.tooltip += ' ' + vscode.l10n.t('The loop runs {0} batches: about {1} at its end.', growth.batches, formatBytes(response.total + growth.keptAfterBatches));
        }
      }
      this.item.backgroundColor = bad || growth ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
      this.item.show();
      this.onChange(document.uri);
    } catch (error) {
      if (seq !== this.seq) return;
      // A model the estimator cannot read: shown as such (no figure), with the reason; anything else: nothing.
      const unresolved = error instanceof ResponseError ? (error.data as { unresolved?: unknown } | undefined)?.unresolved : undefined;
      if (unresolved) {
        this.item.text = `$(question) ${vscode.l10n.t('no estimate')}`;
        this.item.tooltip = (error as Error).message;
        this.item.backgroundColor = undefined;
        this.item.show();
      } else {
        this.item.hide();
      }
    }
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    for (const disposable of this.disposables) disposable.dispose();
  }
}
