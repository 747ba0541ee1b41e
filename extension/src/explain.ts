// "OOM Guard: Explain CUDA OOM Error": sends an error text (a terminal link, a log file, the selection, the whole
// active log, or the clipboard) to the server's `oomguard/explainOom` request and shows the answer as a
// read-only Markdown preview.
import * as vscode from 'vscode';
import type { BaseLanguageClient as LanguageClient } from 'vscode-languageclient';
import { EXPLAIN_OOM_COMMAND, EXPLAIN_OOM_REQUEST } from '../../server/src/protocol';
import type { ExplainOomParams, ExplainOomResult } from '../../server/src/protocol';

const SCHEME = 'oomguard-explain';
const OOM_PATTERN = /\b(?:CUDA|HIP)\s+out\s+of\s+memory\b/;

/** Serves the explanations as read-only virtual Markdown documents, one per request. */
class ExplanationDocuments implements vscode.TextDocumentContentProvider {
  private readonly contents = new Map<string, string>();
  private counter = 0;

  add(markdown: string): vscode.Uri {
    this.counter += 1;
    // Keep only the few latest explanations: each one is a small string, but a long session may ask many times.
    if (this.contents.size >= 20) this.contents.delete(this.contents.keys().next().value as string);
    const uri = vscode.Uri.from({ scheme: SCHEME, path: `/${vscode.l10n.t('CUDA OOM explanation')} ${this.counter}.md` });
    this.contents.set(uri.toString(), markdown);
    return uri;
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.contents.get(uri.toString()) ?? '';
  }
}

const documents = new ExplanationDocuments();

interface ErrorText {
  text: string;
  /** The folder of the log the text came from, where a relative traceback path is looked up first. */
  folder?: string;
}

async function readLog(uri: vscode.Uri): Promise<ErrorText> {
  const bytes = await vscode.workspace.fs.readFile(uri);
  return { text: new TextDecoder('utf-8').decode(bytes), folder: uri.scheme === 'file' ? vscode.Uri.joinPath(uri, '..').fsPath : undefined };
}

/** Where the error text comes from, in order: an argument, the selection, the active log, the clipboard, a file. */
async function errorText(arg: unknown): Promise<ErrorText | undefined> {
  if (typeof arg === 'string') return { text: arg };
  if (arg instanceof vscode.Uri) return readLog(arg);
  const editor = vscode.window.activeTextEditor;
  if (editor) {
    const folder = editor.document.uri.scheme === 'file' ? vscode.Uri.joinPath(editor.document.uri, '..').fsPath : undefined;
    const selected = editor.selections.map((selection) => editor.document.getText(selection)).join('\n');
    if (selected.trim().length > 0) return { text: selected, folder };
    const whole = editor.document.getText();
    if (OOM_PATTERN.test(whole)) return { text: whole, folder };
  }
  const clipboard = await vscode.env.clipboard.readText();
  if (OOM_PATTERN.test(clipboard)) return { text: clipboard };
  const picked = await vscode.window.showOpenDialog({
    canSelectMany: false,
    openLabel: vscode.l10n.t('Explain'),
    title: vscode.l10n.t('No CUDA out-of-memory error in the selection or the clipboard: pick a training log'),
    filters: { [vscode.l10n.t('Logs')]: ['log', 'txt', 'out', 'err'], [vscode.l10n.t('All files')]: ['*'] },
  });
  return picked?.[0] ? readLog(picked[0]) : undefined;
}

async function explain(getClient: () => LanguageClient | undefined, arg: unknown): Promise<void> {
  const source = await errorText(arg);
  if (!source) return;
  const client = getClient();
  if (!client || !client.isRunning()) {
    void vscode.window.showErrorMessage(vscode.l10n.t('The OOM Guard server is not running; run "OOM Guard: Restart Server" and try again.'));
    return;
  }
  const roots = [
    ...(source.folder ? [source.folder] : []),
    ...(vscode.workspace.workspaceFolders ?? []).filter((folder) => folder.uri.scheme === 'file').map((folder) => folder.uri.fsPath),
  ];
  const params: ExplainOomParams = { text: source.text, roots, uriScheme: vscode.env.uriScheme };
  let result: ExplainOomResult;
  try {
    result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Window, title: vscode.l10n.t('Explaining the CUDA out-of-memory error…') },
      () => client.sendRequest<ExplainOomResult>(EXPLAIN_OOM_REQUEST, params),
    );
  } catch (error) {
    void vscode.window.showErrorMessage(vscode.l10n.t('OOM Guard could not explain the error: {0}', error instanceof Error ? error.message : String(error)));
    return;
  }
  if (result.explanations.length === 0) {
    void vscode.window.showInformationMessage(vscode.l10n.t('No CUDA out-of-memory error was found in that text.'));
    return;
  }
  const uri = documents.add(result.markdown);
  try {
    await vscode.commands.executeCommand('markdown.showPreview', uri);
  } catch {
    // Without the built-in Markdown extension, show the Markdown source, still read-only.
    const document = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(document, { preview: true });
  }
}

/**
 * The active terminal's text. VS Code has no API to read a terminal, so this selects all, copies, and puts the
 * user's clipboard back.
 */
async function terminalBuffer(): Promise<string | undefined> {
  const saved = await vscode.env.clipboard.readText();
  try {
    await vscode.commands.executeCommand('workbench.action.terminal.selectAll');
    await vscode.commands.executeCommand('workbench.action.terminal.copySelection');
    await vscode.commands.executeCommand('workbench.action.terminal.clearSelection');
    const text = await vscode.env.clipboard.readText();
    return text !== saved && OOM_PATTERN.test(text) ? text : undefined;
  } catch {
    return undefined;
  } finally {
    await vscode.env.clipboard.writeText(saved);
  }
}

interface OomTerminalLink extends vscode.TerminalLink {
  line: string;
}

/** Terminal lines with a CUDA out-of-memory error get a link that explains that line. */
function terminalLinks(getClient: () => LanguageClient | undefined): vscode.TerminalLinkProvider<OomTerminalLink> {
  return {
    provideTerminalLinks(context) {
      const match = OOM_PATTERN.exec(context.line);
      if (!match) return [];
      return [{ startIndex: match.index, length: match[0].length, tooltip: vscode.l10n.t('Explain this CUDA out-of-memory error'), line: context.line }];
    },
    async handleTerminalLink(link) {
      // The link's line alone loses the traceback above it (the script's frame, the figures of older wordings):
      // send the terminal's whole buffer when it holds the error, else the line.
      const buffer = await terminalBuffer();
      return explain(getClient, buffer && buffer.includes(link.line.trim()) ? buffer : link.line);
    },
  };
}

/** The command's handler, for the extension's command table. */
export function explainOomCommand(getClient: () => LanguageClient | undefined): (...args: unknown[]) => Promise<void> {
  return (arg?: unknown) => explain(getClient, arg);
}

/** The virtual documents and the terminal link provider the command relies on. */
export function registerExplainProviders(getClient: () => LanguageClient | undefined): vscode.Disposable[] {
  return [
    vscode.workspace.registerTextDocumentContentProvider(SCHEME, documents),
    vscode.window.registerTerminalLinkProvider(terminalLinks(getClient)),
  ];
}

export { EXPLAIN_OOM_COMMAND };
