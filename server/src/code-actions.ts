// Code actions for the findings of one document. A diagnostic names its finding (code and range); the fixes are
// those of the findings the server published for the current text, never edits a client kept from an older one.
import { CodeActionKind } from './lsp';
import type { CodeAction, CodeActionParams, Diagnostic, TextEdit } from 'vscode-languageserver';
import { findNoqa } from './engine/suppression';
import { t } from './l10n';
import { Commands, DIAGNOSTIC_SOURCE } from './protocol';
import type { SemanticModel } from './engine/semantic/model';
import type { AnalysisOptions } from './engine/analyze';
import type { Finding, Fix } from './engine/types';
import { refactoringsAt } from './fixes/refactorings';
import { fixAllActions } from './features/fix-all';
import { filePathOf } from './features/memory-estimate';

function lineText(text: string, starts: readonly number[], line: number): string {
  const start = starts[line] ?? text.length;
  const end = starts[line + 1] ?? text.length;
  return text.slice(start, end).replace(/\r?\n$|\r$/, '');
}

/** The edit that adds `# noqa: CODE` to a line, or adds CODE to the noqa already there. */
export function noqaEdit(text: string, lineStarts: readonly number[], line: number, code: string): TextEdit | undefined {
  const current = lineText(text, lineStarts, line);
  const noqa = findNoqa(current);
  if (noqa) {
    // A bare `# noqa` already silences everything on the line.
    if (!noqa.codes || noqa.codes.includes(code)) return undefined;
    return {
      range: { start: { line, character: noqa.start }, end: { line, character: noqa.end } },
      newText: `# noqa: ${[...noqa.codes, code].join(', ')}`,
    };
  }
  const end = current.length;
  return { range: { start: { line, character: end }, end: { line, character: end } }, newText: `  # noqa: ${code}` };
}

/** A diagnostic of this server: its source, and the rule's code (a client sends both back with each code action request). */
function isOurs(diagnostic: Diagnostic): diagnostic is Diagnostic & { code: string } {
  return diagnostic.source === DIAGNOSTIC_SOURCE && typeof diagnostic.code === 'string';
}

function findingKey(code: string, range: Diagnostic['range']): string {
  return `${code}@${range.start.line}:${range.start.character}-${range.end.line}:${range.end.character}`;
}

/** The fixes of the findings that the diagnostics show, by code and range (none for a diagnostic of another text). */
function fixesByDiagnostic(findings: readonly Finding[] | undefined): (diagnostic: Diagnostic & { code: string }) => readonly Fix[] {
  const byKey = new Map<string, readonly Fix[]>();
  for (const finding of findings ?? []) if (finding.fixes.length > 0) byKey.set(findingKey(finding.code, finding.range), finding.fixes);
  return (diagnostic) => byKey.get(findingKey(diagnostic.code, diagnostic.range)) ?? [];
}

/** Whether the client asked for actions of `kind` (no `only` means every kind). */
export function wantsKind(params: CodeActionParams, kind: string): boolean {
  const only = params.context.only;
  return !only || only.some((requested) => kind === requested || kind.startsWith(`${requested}.`));
}

export interface CodeActionRequest {
  text: string;
  /** Where each line of `text` starts (the document store keeps them up to date edit by edit). */
  lineStarts: readonly number[];
  params: CodeActionParams;
  model: SemanticModel | undefined;
  /** The options the document's diagnostics were computed with (settings over pyproject.toml). */
  analysisOptions?: AnalysisOptions;
  /** The findings published for this version of the text (absent while none are: then no fix is offered). */
  findings?: readonly Finding[];
  /** Which fixes "fix all" may take (all when absent): asked of one notebook cell, those inside that cell. */
  fixFilter?: (fix: Pick<Fix, 'edits'>) => boolean;
}

/** Produces the code actions of one kind; code-actions.ts asks every provider in turn. */
export type CodeActionProvider = (request: CodeActionRequest) => CodeAction[];

/** Quick fixes carried by the diagnostics, plus "Disable for this line" and "Show documentation". */
export function quickFixActions({ text, lineStarts, params, findings }: CodeActionRequest): CodeAction[] {
  const uri = params.textDocument.uri;
  if (!wantsKind(params, CodeActionKind.QuickFix)) return [];
  const actions: CodeAction[] = [];
  const fixesOf = fixesByDiagnostic(findings);
  for (const diagnostic of params.context.diagnostics) {
    if (!isOurs(diagnostic)) continue;
    const { code } = diagnostic;
    for (const fix of fixesOf(diagnostic)) {
      actions.push({
        title: fix.title,
        kind: CodeActionKind.QuickFix,
        diagnostics: [diagnostic],
        isPreferred: fix.preferred ?? false,
        edit: { changes: { [uri]: fix.edits } },
      });
    }
    const noqa = noqaEdit(text, lineStarts, diagnostic.range.start.line, code);
    if (noqa) {
      actions.push({
        title: t('Disable {0} for this line', code),
        kind: CodeActionKind.QuickFix,
        diagnostics: [diagnostic],
        edit: { changes: { [uri]: [noqa] } },
      });
    }
    actions.push({
      title: t('Show documentation for {0}', code),
      kind: CodeActionKind.QuickFix,
      diagnostics: [diagnostic],
      command: { title: t('Show documentation for {0}', code), command: Commands.showDocumentation, arguments: [code] },
    });
  }
  return actions;
}

/** Every code action provider, in the order their actions are listed. */
/** The refactorings of the training loop at the cursor (fixes/refactorings), as actions of kind refactor.rewrite. */
const refactoringActions: CodeActionProvider = ({ text, lineStarts, params, model }) => {
  const only = params.context.only;
  const wanted = !only || only.some((kind) => CodeActionKind.RefactorRewrite === kind || CodeActionKind.RefactorRewrite.startsWith(`${kind}.`));
  if (!model || !wanted) return [];
  const uri = params.textDocument.uri;
  return refactoringsAt(model, text, params.range.start, { lineStarts, filePath: filePathOf(uri) }).map((refactoring): CodeAction => ({
    title: refactoring.title,
    kind: CodeActionKind.RefactorRewrite,
    edit: { changes: { [uri]: refactoring.edits } },
  }));
};

export const CODE_ACTION_PROVIDERS: CodeActionProvider[] = [quickFixActions, refactoringActions, fixAllActions];

export function codeActionsFor(request: CodeActionRequest): CodeAction[] {
  return CODE_ACTION_PROVIDERS.flatMap((provider) => provider(request));
}
