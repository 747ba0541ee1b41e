// The refactorings offered on a training loop (code actions of kind refactor.rewrite): mixed precision, gradient
// checkpointing and gradient accumulation. `refactoringsAt` is plain engine code (the CLI and tests call it);
// `refactoringActions` turns its results into LSP code actions.
import { CodeActionKind } from 'vscode-languageserver/node';
import type { CodeAction } from 'vscode-languageserver/node';
import type { SemanticModel } from '../../engine/semantic/model';
import type { Position } from '../../engine/types';
// Types only: code-actions.ts imports this module, so a value import back would be circular.
import type { CodeActionProvider } from '../../code-actions';
import { gradientAccumulation } from './accumulation';
import { bfloat16Amp, float16Amp } from './amp';
import { gradientCheckpointing } from './checkpointing';
import { trainingLoopAt } from './training-loop';
import type { Refactoring, RefactoringContext } from './training-loop';

export type { Refactoring } from './training-loop';

/** Every refactoring, in the order the editor lists them. */
const REFACTORINGS: Array<(context: RefactoringContext) => Refactoring[]> = [
  bfloat16Amp,
  float16Amp,
  gradientCheckpointing,
  gradientAccumulation,
];

/** The refactorings that apply to the training loop at `position` (none where the cursor is in no training loop). */
export function refactoringsAt(model: SemanticModel, text: string, position: Position, lineStarts?: readonly number[]): Refactoring[] {
  const loop = trainingLoopAt(model, text, position, lineStarts);
  if (!loop) return [];
  const context: RefactoringContext = { model, text, loop };
  return REFACTORINGS.flatMap((refactoring) => refactoring(context));
}

export const refactoringActions: CodeActionProvider = ({ text, lineStarts, params, model }) => {
  const only = params.context.only;
  const wanted = !only || only.some((kind) => CodeActionKind.RefactorRewrite === kind || CodeActionKind.RefactorRewrite.startsWith(`${kind}.`));
  if (!model || !wanted) return [];
  const uri = params.textDocument.uri;
  return refactoringsAt(model, text, params.range.start, lineStarts).map((refactoring): CodeAction => ({
    title: refactoring.title,
    kind: CodeActionKind.RefactorRewrite,
    edit: { changes: { [uri]: refactoring.edits } },
  }));
};
