// What the refactorings share: finding the training loop at the cursor, the statements of its body that forward,
// backpropagate and step, and line edits that keep the file's indentation and line endings.
import type { ProgramModel } from '../../engine/program/interpreter';
import { detectConfig, type DetectedConfig } from '../../estimator/detect';
import { splitLines } from '../../engine/lines';
import { computeLineStarts, offsetAt } from '../../engine/documents';
import type { Node } from '../../engine/parser';
import type { SemanticModel } from '../../engine/semantic/model';
import { looksLikeSchedulerName } from '../../engine/semantic/names';
import { callReceiver, calleeName, contains, dottedName, enclosingLoops, enclosingStatement } from '../../engine/syntax';
import type { Position, TextEdit } from '../../engine/types';
import { indentUnit, insertAt, lineEnding, lineIndent } from '../edits';

/** One refactoring as the editor offers it: a title and the edits that apply it. */
export interface Refactoring {
  title: string;
  edits: TextEdit[];
  /** The estimated peak before and after, where the estimate can read the script. */
  peak?: { before: number; after: number };
}

/** What every refactoring receives: the shared model, the text and the training loop at the cursor. */
export interface RefactoringContext {
  model: SemanticModel;
  text: string;
  loop: TrainingLoop;
  /** The program model of the script (config files read relative to it). */
  program: ProgramModel;
  /** The script's path on disk, where it has one. */
  filePath?: string;
  /** Accumulation steps asked for (the CLI's `accumulation:K`); the editor's choices when absent. */
  accumulation?: number;
}

export interface TrainingLoop {
  /** The loop that runs once per batch and backpropagates. */
  node: Node;
  body: Node;
  /** The outermost loop around it in the same function (an epoch loop), or the loop itself. */
  outermost: Node;
  /** Calls whose innermost loop is this one (nested loops and local functions excluded). */
  directCalls: Node[];
}

/** A loop that trains: it runs per batch and backpropagates (directly or through a function of this file). */
function isTrainingLoop(model: SemanticModel, loop: Node): boolean {
  return loop.type === 'for_statement' || loop.type === 'while_statement'
    ? model.isPerBatchLoop(loop) && model.runsBackward(loop)
    : false;
}

function describe(model: SemanticModel, loop: Node): TrainingLoop | undefined {
  const body = loop.childForFieldName('body');
  if (!body) return undefined;
  const loops = enclosingLoops(loop);
  const directCalls = model.callsWithin(body).filter((call) => enclosingLoops(call)[0]?.id === loop.id);
  return { node: loop, body, outermost: loops[loops.length - 1] ?? loop, directCalls };
}

/**
 * The training loop at `position`: the innermost loop around the cursor that trains, or, where the cursor is on an
 * epoch loop (or its `for` line), the first training loop inside it.
 */
export function trainingLoopAt(
  model: SemanticModel,
  text: string,
  position: Position,
  lineStarts: readonly number[] = computeLineStarts(text),
): TrainingLoop | undefined {
  const offset = offsetAt(text, lineStarts, position);
  const around = model.loops
    .filter((loop) => loop.startIndex <= offset && offset <= loop.endIndex)
    .sort((a, b) => b.startIndex - a.startIndex);
  for (const loop of around) {
    if (isTrainingLoop(model, loop)) return describe(model, loop);
  }
  const innermost = around[0];
  if (!innermost) return undefined;
  const nested = model.loops.find((loop) => loop.id !== innermost.id && contains(innermost, loop) && isTrainingLoop(model, loop));
  return nested ? describe(model, nested) : undefined;
}

/** The statement of `body` (a direct child) that holds `node`. */
export function bodyStatement(node: Node, body: Node): Node | undefined {
  let current: Node | null = node;
  while (current && current.parent?.id !== body.id) current = current.parent;
  return current ?? undefined;
}

/** The statements of a block, comments left out. */
export function statementsOf(block: Node): Node[] {
  return block.namedChildren.filter((child) => child.type !== 'comment');
}

/** The last text split (see linesOf) and its lines. */
let lastLines: { text: string; lines: readonly string[] } | undefined;

/**
 * The lines of the text without their line endings. A refactoring asks for them several times (its edits, the
 * indentation of a block, the line above a loop) and the estimate request runs three refactorings on one version:
 * the last text's lines are kept, not split again (a 1,000-line script: 10 splits a request, 3 ms here).
 */
export function linesOf(text: string): readonly string[] {
  if (lastLines?.text !== text) lastLines = { text, lines: splitLines(text) };
  return lastLines.lines;
}

/** Whether a statement stands on lines of its own (no `a; b`, not on its loop's `for` line). */
export function standsAlone(statement: Node): boolean {
  if (lineIndent(statement).length !== statement.startPosition.column) return false;
  const block = statement.parent;
  if (!block) return false;
  return statementsOf(block).every(
    (other) => other.id === statement.id || (other.endPosition.row !== statement.startPosition.row && other.startPosition.row !== statement.endPosition.row),
  );
}

/** Whether re-indenting `node` would change a string's content (a multi-line string inside it). */
export function holdsMultiLineString(node: Node): boolean {
  return node.descendantsOfType('string').some((string) => string.endPosition.row > string.startPosition.row);
}

/** Replaces whole lines [first, last] (0-based, inclusive) by `lines`, joined with the file's line ending. */
export function replaceLines(text: string, first: number, last: number, lines: string[]): TextEdit {
  const all = linesOf(text);
  return {
    range: { start: { line: first, character: 0 }, end: { line: last, character: (all[last] ?? '').length } },
    newText: lines.join(lineEnding(text)),
  };
}

/** Inserts lines before line `row`. */
export function insertLinesBefore(text: string, row: number, lines: string[]): TextEdit {
  const eol = lineEnding(text);
  return insertAt({ line: row, character: 0 }, lines.map((line) => line + eol).join(''));
}

/** Inserts lines after line `row` (also where it is the last line and has no line ending). */
export function insertLinesAfter(text: string, row: number, lines: string[]): TextEdit {
  const eol = lineEnding(text);
  const all = linesOf(text);
  if (row + 1 >= all.length || (row + 1 === all.length - 1 && all[row + 1] === '' && !/[\r\n]$/.test(text))) {
    return insertAt({ line: row, character: (all[row] ?? '').length }, lines.map((line) => eol + line).join(''));
  }
  return insertAt({ line: row + 1, character: 0 }, lines.map((line) => line + eol).join(''));
}

/** The text of lines [first, last], each moved from indentation `from` to indentation `to`. */
export function reindent(text: string, first: number, last: number, from: string, to: string): string[] {
  return linesOf(text).slice(first, last + 1).map((line) => {
    if (line.trim() === '') return line;
    return line.startsWith(from) ? to + line.slice(from.length) : to + line.trimStart();
  });
}

/** One indentation level as the file writes it. */
export function unitOf(text: string): string {
  return indentUnit(text);
}

/** Whether the file names `name` anywhere (an identifier), so a new variable of that name would clash. */
export function usesName(model: SemanticModel, name: string): boolean {
  return identifierTexts(model).has(name);
}

/** Every identifier the file writes, each text once: made once per model for all the questions about its names. */
export function identifierTexts(model: SemanticModel): ReadonlySet<string> {
  return model.memo(`identifiers`, () => new Set(model.root.descendantsOfType('identifier').map((node) => node.text)));
}

/** The line a statement that must run before `loop` goes on: above the comment lines that introduce the loop. */
export function lineAbove(text: string, loop: Node): number {
  const all = linesOf(text);
  const indent = lineIndent(loop);
  let row = loop.startPosition.row;
  const isIntroComment = (line: string) => line.trimStart().startsWith('#') && /^[ \t]*/.exec(line)![0] === indent;
  while (row > 0 && isIntroComment(all[row - 1]!)) row--;
  return row;
}

/** Module-level `import` lines: the row after the last one (0 where there is none, after a docstring). */
export function rowAfterImports(model: SemanticModel): number {
  let row = 0;
  for (const child of model.root.namedChildren) {
    if (child.type === 'import_statement' || child.type === 'import_from_statement' || child.type === 'future_import_statement') row = child.endPosition.row + 1;
    else if (row === 0 && child.type === 'expression_statement' && child.namedChildren[0]?.type === 'string') row = child.endPosition.row + 1;
  }
  return row;
}

/** The call of the statement `statement`, when the statement is one call (`x.f()` or `y = x.f()`). */
export function statementCall(statement: Node): Node | undefined {
  const expression = statement.type === 'expression_statement' ? statement.namedChildren[0] : undefined;
  if (expression?.type === 'call') return expression;
  if (expression?.type === 'assignment') {
    const right = expression.childForFieldName('right');
    return right?.type === 'call' ? right : undefined;
  }
  return undefined;
}

/** Calls that belong with an optimizer step: the step itself, clearing and clipping gradients, the scaler, the scheduler. */
export function isStepRelatedCall(model: SemanticModel, call: Node): boolean {
  const name = calleeName(call) ?? '';
  if (model.isOptimizerStep(call) || model.isGradClearCall(call)) return true;
  if (name === 'clip_grad_norm_' || name === 'clip_grad_value_') return true;
  const receiver = callReceiver(call);
  if ((name === 'update' || name === 'unscale_') && model.isScalerRef(receiver)) return true;
  // `scheduler.step()`, timm's `lr_scheduler.step_update(num_updates=...)`.
  return (name === 'step' || name === 'step_update') && looksLikeSchedulerName(dottedName(receiver)?.split('.').pop() ?? '');
}

/** The statement holding `node`, as seen from its block. */
export function statementOf(node: Node): Node {
  return enclosingStatement(node);
}

/** A primary expression stays as is; anything else is parenthesised before an operator or a method is applied. */
export function primary(node: Node): string {
  const types = ['identifier', 'attribute', 'call', 'subscript', 'parenthesized_expression', 'integer', 'float'];
  return types.includes(node.type) ? node.text : `(${node.text})`;
}

/**
 * The estimator's reading of the script, once per document version for every refactoring (the weights' dtype, the
 * model's name, the estimate a refactoring is offered on). `filePath`: config files are read relative to it; the
 * program model of the tree is shared, so the first caller's path holds.
 */
export function detectedConfig(model: SemanticModel, text: string, filePath?: string): DetectedConfig {
  return model.memo('detected-config', () => detectConfig({ rootNode: model.root }, text, filePath));
}

/** Whether the weights are already bf16/fp16 (a cast, `torch_dtype=`, a checkpoint stored in half precision). */
export function weightsAreHalf(model: SemanticModel, text: string, filePath?: string): boolean {
  try {
    const detected = detectedConfig(model, text, filePath);
    return (detected.weightDtype?.value ?? detected.model?.defaultWeightDtype ?? 'fp32') !== 'fp32';
  } catch {
    return false;
  }
}
