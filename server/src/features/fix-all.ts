// `source.fixAll.oomguard`: applies every safe fix of the document in one edit, for "Fix all" and for
// `"editor.codeActionsOnSave": { "source.fixAll.oomguard": "explicit" }`. Unsafe fixes (those that may change what
// the program computes) are never applied here, as `oomguard check --fix` does not apply them either.
import { CodeActionKind } from '../lsp';
import type { CodeAction, CodeActionParams } from 'vscode-languageserver';
import type { CodeActionProvider } from '../code-actions';
import { DIAGNOSTIC_SOURCE } from '../protocol';
import { analyze } from '../engine/analyze';
import type { TextEdit } from '../engine/types';
import { chooseFixEdits } from '../fixes/apply';
import { t } from '../l10n';

export const FIX_ALL_KIND = 'source.fixAll.oomguard';

/** Whether the client asked for this kind: no `only`, or `source`, `source.fixAll`, `source.fixAll.oomguard`. */
function wantsFixAll(params: CodeActionParams): boolean {
  const only = params.context.only;
  if (!only) return false; // Source actions are listed only when asked for, as VS Code expects.
  return only.some((requested) => FIX_ALL_KIND === requested || FIX_ALL_KIND.startsWith(`${requested}.`));
}

/** The edits of every safe fix, one fix per finding, chosen as `oomguard check --fix` chooses them. */
export function safeFixEdits(text: string, fixes: ReadonlyArray<{ safe: boolean; edits: TextEdit[] }>): TextEdit[] {
  return chooseFixEdits(text, fixes.filter((fix) => fix.safe)).edits;
}

/**
 * Also listed in the quick fix menu (Ctrl+.) next to a finding of ours, as ESLint's "Fix all auto-fixable problems":
 * most users never open the Source Action menu.
 */
function wantsQuickFixAll(params: CodeActionParams): boolean {
  const only = params.context.only;
  const quickFix = !only || only.some((requested) => requested === CodeActionKind.QuickFix || CodeActionKind.QuickFix.startsWith(`${requested}.`));
  return quickFix && params.context.diagnostics.some((diagnostic) => diagnostic.source === DIAGNOSTIC_SOURCE);
}

export const fixAllActions: CodeActionProvider = ({ text, params, model, analysisOptions, findings: published, fixFilter }): CodeAction[] => {
  const asSource = wantsFixAll(params);
  const asQuickFix = wantsQuickFixAll(params);
  if ((!asSource && !asQuickFix) || !model) return [];
  // The findings published for this version; else read from the shared model (never a second parse), with the
  // document's options.
  const findings = published ?? analyze(model, text, analysisOptions ?? {});
  const fixes = findings.map((finding) => finding.fixes.find((fix) => fix.safe) ?? { safe: false, edits: [] });
  const edits = safeFixEdits(text, fixFilter ? fixes.filter(fixFilter) : fixes);
  if (edits.length === 0) return [];
  const edit = { changes: { [params.textDocument.uri]: edits } };
  return [
    ...(asSource ? [{ title: t('Fix all safe OOM Guard findings'), kind: FIX_ALL_KIND, edit }] : []),
    ...(asQuickFix ? [{ title: t('Fix all auto-fixable problems'), kind: CodeActionKind.QuickFix, edit }] : []),
  ];
};
