// Rule documentation opened inside VS Code: the Markdown pages ship in the .vsix (docs/rules, docs/zh-CN/rules),
// so a diagnostic's code link and "Show documentation for OOM1xx" open them in the Markdown preview, offline, in
// the display language, instead of a web page.
import * as vscode from 'vscode';
import type { Middleware } from 'vscode-languageclient';
import { Commands, DIAGNOSTIC_SOURCE } from '../../server/src/protocol';

export const SHOW_RULE_DOC_COMMAND = 'oomguard.showRuleDoc';

/** The shipped page of a rule: the Chinese one for a Chinese display language, when it exists. */
async function ruleDocUri(extensionUri: vscode.Uri, code: string): Promise<vscode.Uri | undefined> {
  const folders = /^zh\b/i.test(vscode.env.language) ? [['docs', 'zh-CN', 'rules'], ['docs', 'rules']] : [['docs', 'rules']];
  for (const folder of folders) {
    const uri = vscode.Uri.joinPath(extensionUri, ...folder, `${code}.md`);
    try {
      await vscode.workspace.fs.stat(uri);
      return uri;
    } catch {
      // Not shipped in this language: try the next.
    }
  }
  return undefined;
}

export async function showRuleDoc(extensionUri: vscode.Uri, code: unknown): Promise<void> {
  if (typeof code !== 'string' || !/^OOM\d{3}$/.test(code)) return;
  const uri = await ruleDocUri(extensionUri, code);
  if (!uri) {
    void vscode.window.showWarningMessage(vscode.l10n.t('OOM Guard has no documentation for {0}.', code));
    return;
  }
  try {
    await vscode.commands.executeCommand('markdown.showPreview', uri);
  } catch {
    // Without the built-in Markdown extension: the page as text, still from the package.
    await vscode.window.showTextDocument(uri, { preview: true });
  }
}

/** The command URI a diagnostic's code links to (the Problems panel and hovers open command links). */
function ruleDocCommandUri(code: string): vscode.Uri {
  return vscode.Uri.parse(`command:${SHOW_RULE_DOC_COMMAND}?${encodeURIComponent(JSON.stringify([code]))}`);
}

/**
 * The language client's middleware: code links of our diagnostics point at the shipped page, and the server's
 * "show documentation" command (which other editors answer with a web page) opens it here.
 */
export function ruleDocMiddleware(extensionUri: vscode.Uri): Pick<Middleware, 'handleDiagnostics' | 'executeCommand'> {
  return {
    handleDiagnostics(uri, diagnostics, next) {
      for (const diagnostic of diagnostics) {
        const code = diagnostic.code;
        if (diagnostic.source !== DIAGNOSTIC_SOURCE || typeof code !== 'object' || code === null) continue;
        diagnostic.code = { value: code.value, target: ruleDocCommandUri(String(code.value)) };
      }
      next(uri, diagnostics);
    },
    executeCommand(command, args, next) {
      if (command === Commands.showDocumentation) return showRuleDoc(extensionUri, args[0]);
      return next(command, args);
    },
  };
}
