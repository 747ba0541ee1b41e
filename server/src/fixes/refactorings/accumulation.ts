// Refactoring "Add gradient accumulation (N steps)": the loss is scaled by 1/N before backward; the optimizer step,
// the scaler update, the scheduler step, gradient clipping and gradient clearing run once every N micro-batches,
// and once more after the loop for the micro-batches left over at the end of the epoch. Where the file sets its
// batch size with one integer literal that N divides, the micro-batch becomes that size / N, so the effective batch
// size (written in a comment) stays what it was and the activations shrink N-fold.
import { splitLines } from '../../engine/lines';
import type { Node } from '../../engine/parser';
import type { SemanticModel } from '../../engine/semantic/model';
import { callArguments, calleeName, callReceiver, dottedName, nameWords } from '../../engine/syntax';
import type { TextEdit } from '../../engine/types';
import { t } from '../../l10n';
import { lineIndent, replaceNode } from '../edits';
import {
  bodyStatement,
  holdsMultiLineString,
  insertLinesAfter,
  insertLinesBefore,
  isStepRelatedCall,
  lineAbove,
  linesOf,
  primary,
  reindent,
  replaceLines,
  standsAlone,
  statementCall,
  statementsOf,
  unitOf,
  usesName,
} from './training-loop';
import type { Refactoring, RefactoringContext } from './training-loop';

export const ACCUMULATION_CHOICES = [2, 4, 8];
const STEPS = 'accumulation_steps';
const COUNTER = 'micro_step';

/** Whether the file accumulates gradients already (a name about accumulation, or accelerate's `accumulate`). */
function accumulatesAlready(model: SemanticModel): boolean {
  return model.memo('accumulates', () =>
    model.root.descendantsOfType('identifier').some((node) => nameWords(node.text).some((word) => /^(accum|accumulate|accumulation|accumulated)$/.test(word)) && !/^(total|running|sum)/.test(node.text)),
  );
}

function isBatchSizeName(name: string): boolean {
  const words = nameWords(name);
  const isBatch = (words.includes('batch') && words.includes('size')) || name.toLowerCase() === 'bs';
  return isBatch && !words.some((word) => /^(eval|val|valid|validation|test|inference|predict)$/.test(word));
}

/**
 * The integer literal that sets the training batch size: `batch_size=32` in a DataLoader, or the one
 * `batch_size = 32` assignment it names (or the file's only such assignment). Undefined where it is not one literal.
 */
function batchSizeLiteral(model: SemanticModel): Node | undefined {
  const literalOf = (name: string): Node | undefined => {
    const values = model.assignments
      .filter((assignment) => dottedName(assignment.childForFieldName('left'))?.split('.').pop() === name)
      .map((assignment) => assignment.childForFieldName('right'));
    return values.length === 1 && values[0]?.type === 'integer' ? values[0] : undefined;
  };
  const loaders = model.calls.filter((call) => calleeName(call) === 'DataLoader' && callArguments(call).keywords.has('batch_size'));
  const fromLoaders = loaders
    .filter((call) => !nameWords(call.parent?.type === 'assignment' ? call.parent.childForFieldName('left')?.text ?? '' : '').some((word) => /^(eval|val|valid|test)$/.test(word)))
    .map((call) => {
      const value = callArguments(call).keywords.get('batch_size')!;
      return value.type === 'integer' ? value : value.type === 'identifier' || value.type === 'attribute' ? literalOf(dottedName(value)!.split('.').pop()!) : undefined;
    });
  if (loaders.length > 0) return fromLoaders.length === 1 ? fromLoaders[0] : undefined;
  const names = new Set(model.assignments.map((a) => dottedName(a.childForFieldName('left'))?.split('.').pop() ?? '').filter(isBatchSizeName));
  return names.size === 1 ? literalOf([...names][0]!) : undefined;
}

/** The backward call with its loss divided by the number of accumulation steps. */
function scaledBackward(model: SemanticModel, backward: Node): { node: Node; text: string } | undefined {
  const receiver = callReceiver(backward);
  const divide = (loss: Node) => `${primary(loss)} / ${STEPS}`;
  if (calleeName(backward) === 'backward' && receiver) {
    // `scaler.scale(loss).backward()`: the loss inside the scaler is divided.
    if (receiver.type === 'call' && calleeName(receiver) === 'scale' && model.isScalerRef(callReceiver(receiver))) {
      const loss = callArguments(receiver).positional[0];
      return loss ? { node: loss, text: divide(loss) } : undefined;
    }
    return { node: receiver, text: `(${divide(receiver)})` };
  }
  // `accelerator.backward(loss)`, `self.manual_backward(loss)`, `torch.autograd.backward(loss)`.
  const loss = callArguments(backward).positional[0];
  return loss ? { node: loss, text: divide(loss) } : undefined;
}

/** Consecutive runs of body statements that belong with the optimizer step. */
function stepRuns(model: SemanticModel, statements: Node[]): Node[][] {
  const runs: Node[][] = [];
  let current: Node[] = [];
  for (const statement of statements) {
    const call = statementCall(statement);
    if (call && isStepRelatedCall(model, call)) current.push(statement);
    else if (current.length > 0) {
      runs.push(current);
      current = [];
    }
  }
  if (current.length > 0) runs.push(current);
  return runs;
}

export function gradientAccumulation(context: RefactoringContext): Refactoring[] {
  const { model, text, loop } = context;
  // Accumulation already in place, or the names this refactoring introduces are taken.
  if (accumulatesAlready(model) || usesName(model, STEPS) || usesName(model, COUNTER)) return [];
  // A loop with an `else:` runs code after the last batch that the flush would have to precede.
  if (loop.node.childForFieldName('alternative')) return [];
  const backwards = loop.directCalls.filter((call) => model.isBackwardCall(call));
  if (backwards.length !== 1) return [];
  const backward = backwards[0]!;
  const backwardStatement = bodyStatement(backward, loop.body);
  if (!backwardStatement || !standsAlone(backwardStatement) || holdsMultiLineString(backwardStatement)) return [];
  // Every optimizer step must be a statement of the loop body itself, so it can be put under the condition.
  const steps = loop.directCalls.filter((call) => model.isOptimizerStep(call));
  if (steps.length === 0 || steps.some((call) => bodyStatement(call, loop.body) !== undefined && statementCall(bodyStatement(call, loop.body)!) !== call)) return [];
  const statements = statementsOf(loop.body);
  const clearsBefore = statements.filter((statement) => {
    const call = statementCall(statement);
    return statement.endIndex <= backwardStatement.startIndex && !!call && model.isGradClearCall(call);
  });
  const runs = stepRuns(model, statements.filter((statement) => statement.startIndex >= backwardStatement.endIndex));
  const moved = [...clearsBefore, ...runs.flat()];
  if (!steps.every((call) => moved.some((statement) => statementCall(statement) === call))) return [];
  if (moved.some((statement) => !standsAlone(statement) || holdsMultiLineString(statement))) return [];
  const scaled = scaledBackward(model, backward);
  if (!scaled) return [];

  const unit = unitOf(text);
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const bodyIndent = lineIndent(backwardStatement);
  const loopIndent = lineIndent(loop.node);
  const outerIndent = lineIndent(loop.outermost);
  const literal = batchSizeLiteral(model);
  const batch = literal ? Number(literal.text.replace(/_/g, '')) : undefined;
  const lines = linesOf(text);
  const refactorings: Refactoring[] = [];
  for (const n of ACCUMULATION_CHOICES) {
    const divides = batch !== undefined && Number.isInteger(batch) && batch % n === 0 && batch / n >= 1;
    const edits: TextEdit[] = [];
    const comment = divides
      ? t('effective batch size: {0} x {1} = {2} samples per optimizer step', batch! / n, n, batch!)
      : t('effective batch size: {0} x the batch size of each micro-batch', n);
    const header = [`${outerIndent}${STEPS} = ${n}  # ${comment}`];
    const counter = `${loopIndent}${COUNTER} = 0`;
    if (loop.outermost.id === loop.node.id) header.push(counter);
    else edits.push(insertLinesBefore(text, lineAbove(text, loop.node), [counter]));
    edits.push(insertLinesBefore(text, lineAbove(text, loop.outermost), header));
    if (divides) edits.push(replaceNode(literal!, String(batch! / n)));
    const condition = (op: '==' | '!=') => `if ${COUNTER} % ${STEPS} ${op} 0:`;
    // Clearing at the top of the body: only when a new group of micro-batches starts.
    for (const statement of clearsBefore) {
      const row = statement.startPosition.row;
      edits.push(replaceLines(text, row, statement.endPosition.row, [`${bodyIndent}${condition('==')}`, ...reindent(text, row, statement.endPosition.row, bodyIndent, bodyIndent + unit)]));
    }
    // The backward with its loss divided by N, then the micro-batch is counted.
    const first = backwardStatement.startPosition.row;
    const last = backwardStatement.endPosition.row;
    const statementText = lines.slice(first, last + 1).join(eol);
    const offsetInStatement = (node: Node) => node.startIndex - (backwardStatement.startIndex - backwardStatement.startPosition.column);
    const start = offsetInStatement(scaled.node);
    const rewritten = statementText.slice(0, start) + scaled.text + statementText.slice(start + (scaled.node.endIndex - scaled.node.startIndex));
    edits.push(replaceLines(text, first, last, [...splitLines(rewritten), `${bodyIndent}${COUNTER} += 1`]));
    for (const run of runs) {
      const row = run[0]!.startPosition.row;
      const end = run[run.length - 1]!.endPosition.row;
      edits.push(replaceLines(text, row, end, [`${bodyIndent}${condition('==')}`, ...reindent(text, row, end, bodyIndent, bodyIndent + unit)]));
    }
    // The micro-batches left at the end of the epoch still update the weights.
    const flush = runs.flatMap((run) => reindent(text, run[0]!.startPosition.row, run[run.length - 1]!.endPosition.row, bodyIndent, loopIndent + unit));
    edits.push(insertLinesAfter(text, loop.node.endPosition.row, [`${loopIndent}${condition('!=')}`, ...flush]));
    refactorings.push({
      title: divides
        ? t('Add gradient accumulation ({0} steps, micro-batch {1} instead of {2})', n, batch! / n, batch!)
        : t('Add gradient accumulation ({0} steps)', n),
      edits,
    });
  }
  return refactorings;
}
