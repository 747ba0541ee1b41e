// Refactoring "Add gradient accumulation (N steps)": the loss is scaled by 1/N before backward; the optimizer step,
// the scaler update, the scheduler step, gradient clipping and gradient clearing run once every N micro-batches,
// and once more after the loop for the micro-batches left over at the end of the epoch (their gradients scaled to the
// mean over the micro-batches there were). Step counters and what checks them (`global_step += 1`, max_steps stops,
// logging every N steps) move with the step, so they still count optimizer steps. Offered only where the batch size
// is one integer literal of the file that N divides (found through the program model: a constant, an argparse
// default, a config entry): the micro-batch becomes that size / N, so the effective batch stays what it was and
// the activations shrink N-fold.
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
  identifierTexts,
  insertLinesAfter,
  insertLinesBefore,
  isStepRelatedCall,
  lineAbove,
  linesOf,
  rowAfterImports,
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
import { lookupClassAttribute, type ProgramModel } from '../../engine/program/interpreter';
import { loopLoader } from '../../estimator/growth';
import { isModuleClass, numberOf, type Value } from '../../engine/program/values';

export const ACCUMULATION_CHOICES = [2, 4, 8];
const STEPS = 'accumulation_steps';
const COUNTER = 'micro_step';
const MICRO_INDEX = 'micro_index';

/** Whether the file accumulates gradients already (a name about accumulation, or accelerate's `accumulate`). */
function accumulatesAlready(model: SemanticModel): boolean {
  // Each name once, from the set of names the other questions read (not a second walk of the whole tree).
  return model.memo('accumulates', () =>
    [...identifierTexts(model)].some((name) => nameWords(name).some((word) => /^(accum|accumulate|accumulation|accumulated)$/.test(word)) && !/^(total|running|sum)/.test(name)),
  );
}


function isBatchSizeName(name: string): boolean {
  const words = nameWords(name);
  const isBatch = (words.includes('batch') && words.includes('size')) || name.toLowerCase() === 'bs';
  return isBatch && !words.some((word) => /^(eval|val|valid|validation|test|inference|predict)$/.test(word));
}

/** Where the training batch size comes from, and the edit that makes each micro-batch 1/N of it. */
interface BatchSource {
  value: number;
  /** The edit for N accumulation steps. */
  divide: (n: number) => TextEdit;
  /** The loader the loop iterates, by name (`len(train_loader)` counts its batches), and as the program model sees it. */
  loader?: string;
  loaderValue?: Value;
  /** The loop pulls its batches from a stateful loader (`next(it)`, `loader.next_batch()`), not by its own index. */
  pulled?: boolean;
}

/**
 * The training batch size and where to divide it. Where the loop iterates a DataLoader the program model can follow
 * (its `batch_size` a constant, an argparse default, a config entry...), the DataLoader's argument is divided there:
 * other uses of the same setting (a dataset size, a learning-rate rule) keep their value. Without a loader (batches
 * sliced by hand), the one batch-size literal the file sets is divided. Undefined where the value is unknown (a YAML
 * file the loader reads at run time is fine; a value computed from the data is not): then accumulation would only
 * make the effective batch larger.
 */
/** A constructor parameter that sizes the batches a script's own loader class yields (nanoGPT's `DataLoaderLite(B, T)`). */
const BATCH_PARAMETER = /^(b|bs|batch|batch_size|micro_batch_size)$/i;

/**
 * The loader a loop draws its batches from: the iterable of a `for`, or, in a `while` loop, the DataLoader behind
 * `next(it)` (`it = iter(loader)`), or an object of the script's own class whose method the loop calls.
 */
function loaderOf(model: SemanticModel, program: ProgramModel, loop: Node): { name?: string; value: Value } | undefined {
  const { node: iterable, value } = loopLoader(program, loop);
  const name = iterable?.type === 'identifier' || iterable?.type === 'attribute' ? iterable.text : undefined;
  if (value && value.kind !== 'list' && value.kind !== 'unknown') return { name, value };
  const body = loop.childForFieldName('body');
  if (!body) return undefined;
  for (const call of model.callsWithin(body)) {
    const fn = call.childForFieldName('function');
    if (fn?.text === 'next') {
      // `next(data_iter)` where `data_iter = iter(loader)`.
      const iterator = callArguments(call).positional[0]?.text;
      const made = model.assignments.find((assignment) => assignment.childForFieldName('left')?.text === iterator && assignment.childForFieldName('right')?.type === 'call'
        && assignment.childForFieldName('right')!.childForFieldName('function')?.text === 'iter');
      const source = made ? callArguments(made.childForFieldName('right')!).positional[0] : undefined;
      const loader = program.valueOf(source);
      if (loader?.kind === 'call' && /(^|\.)DataLoader$/.test(loader.path)) return { name: source!.text, value: loader };
    }
    const receiver = fn?.type === 'attribute' ? fn.childForFieldName('object') : null;
    const object = program.valueOf(receiver);
    if (object?.kind === 'object' && object.role === 'instance' && object.cls && !isModuleClass(object.cls)) return { name: receiver!.text, value: object };
  }
  return undefined;
}

/** The argument of a script class's constructor call that sizes its batches, and its value. */
function constructorBatch(model: SemanticModel, program: ProgramModel, object: Extract<Value, { kind: 'object' }>): { argument: Node; value: number } | undefined {
  const init = object.cls ? lookupClassAttribute(object.cls, '__init__') : undefined;
  const list = init?.kind === 'function' ? init.node.childForFieldName('parameters') : null;
  const parameters = list?.namedChildren.map((p) => (p?.type === 'identifier' ? p.text : p?.childForFieldName('name')?.text ?? ''));
  if (!parameters) return undefined;
  const call = model.calls.find((c) => c.startPosition.row === object.line && c.childForFieldName('function')?.text.split('.').pop() === object.cls!.name);
  if (!call) return undefined;
  const args = callArguments(call);
  for (const [index, name] of parameters.slice(1).entries()) {
    if (!BATCH_PARAMETER.test(name)) continue;
    const argument = args.keywords.get(name) ?? args.positional[index];
    const value = numberOf(program.valueOf(argument));
    if (argument && value !== undefined) return { argument, value };
  }
  return undefined;
}

function batchSource(model: SemanticModel, program: ProgramModel, loop: Node): BatchSource | undefined {
  const found = loaderOf(model, program, loop);
  const loader = found?.value;
  const loaderName = found?.name;
  if (loader?.kind === 'object') {
    const batch = constructorBatch(model, program, loader);
    if (!batch) return undefined;
    const { argument, value } = batch;
    return { value, divide: (n) => replaceNode(argument, argument.type === 'integer' ? String(value / n) : `${primary(argument)} // ${n}`), pulled: true };
  }
  if (loader?.kind === 'call' && /(^|\.)DataLoader$/.test(loader.path)) {
    const batch = loader.kwargs.get('batch_size') ?? loader.args[1];
    const call = model.calls.find((c) => calleeName(c) === 'DataLoader' && c.startPosition.row === loader.line);
    const positional = call ? callArguments(call).positional[1] : undefined;
    const argument = call ? callArguments(call).keywords.get('batch_size') ?? (positional && !/splat/.test(positional.type) ? positional : undefined) : undefined;
    // A batch size handed over in `**kwargs` has no argument here to divide.
    if (batch?.kind !== 'number' || !argument) return undefined;
    const divide = (n: number) => replaceNode(argument, argument.type === 'integer' ? String(batch.value / n) : `${primary(argument)} // ${n}`);
    return { value: batch.value, divide, loader: loaderName, loaderValue: loader, pulled: loopLoader(program, loop).value !== loader };
  }
  // No loader the script builds (one it imports, or batches sliced by hand): the one training batch size it sets.
  const named = [...program.assigned].filter(([name]) => isBatchSizeName(name)).map(([, values]) => values[0]!).filter((value) => value.kind === 'number');
  const batch = named.length === 1 ? named[0] : undefined;
  const origin = batch && 'origin' in batch ? batch.origin : undefined;
  if (!batch || batch.kind !== 'number' || !origin) return undefined;
  // The integer literal with that value on the line it came from (or a string default: `os.environ.get("BS", "64")`).
  const literals = [
    ...model.root.descendantsOfType('integer').filter((node) => node.startPosition.row === origin.line && Number(node.text.replace(/_/g, '')) === batch.value),
    ...model.root.descendantsOfType('string_content').filter((node) => node.startPosition.row === origin.line && /^\d+$/.test(node.text) && Number(node.text) === batch.value),
  ];
  if (literals.length !== 1) return undefined;
  return { value: batch.value, divide: (n) => replaceNode(literals[0]!, String(batch.value / n)) };
}

/**
 * The `len(<loader>)` calls that count the loop's batches: by name in the loop's own block before it, or, through the
 * program model, the same DataLoader under another name in another function (`len(train_loader)` in main() for the
 * `loader` parameter of train_one_epoch()). `elsewhere` is set when one sits in another function, so the number of
 * steps is defined at module level. Undefined where one sits after the loop in its own function, or inside a
 * statement that cannot be corrected simply.
 */
function loaderLengths(model: SemanticModel, program: ProgramModel, loop: { node: Node; outermost: Node }, loader: string, loaderValue: Value | undefined): { found: Array<{ call: Node; statement: Node }>; elsewhere: boolean } | undefined {
  const block = loop.outermost.parent;
  const scope = enclosingScope(loop.outermost);
  const found: Array<{ call: Node; statement: Node }> = [];
  let elsewhere = false;
  for (const call of model.calls) {
    if (call.childForFieldName('function')?.text !== 'len') continue;
    const argument = callArguments(call).positional[0];
    if (!argument) continue;
    if (loop.outermost.startIndex <= call.startIndex && call.endIndex <= loop.outermost.endIndex) continue;
    const sameScope = enclosingScope(call).id === scope.id;
    if (sameScope ? argument.text !== loader : !(loaderValue && program.valueOf(argument) === loaderValue)) continue;
    if (!sameScope) {
      elsewhere = true;
      found.push({ call, statement: call });
      continue;
    }
    if (call.startIndex > loop.outermost.startIndex) return undefined;
    let statement: Node = call;
    while (statement.parent && statement.parent.id !== block?.id) statement = statement.parent;
    if (statement.parent?.id !== block?.id) return undefined;
    found.push({ call, statement });
  }
  return { found: found.sort((a, b) => a.statement.startIndex - b.statement.startIndex), elsewhere };
}

function enclosingScope(node: Node): Node {
  let current = node.parent;
  while (current && current.type !== 'function_definition' && current.type !== 'module') current = current.parent;
  return current ?? node;
}

/** A name that counts optimizer steps (`step += 1`, `global_step += 1`, `num_updates += 1`). */
const STEP_COUNTER = /^(global_?step|steps?|step_?num|iters?|iter_?num|num_iters?|n_?iters?|iterations?|iteration|num_updates|updates|optimizer_steps?|train_steps?|completed_steps|step_count)$/i;

/** Counters the loop body increments: they count optimizer steps, so they move with the step. */
function stepCounters(body: Node): Set<string> {
  const names = new Set<string>();
  for (const statement of statementsOf(body)) {
    const expression = statement.type === 'expression_statement' ? statement.namedChildren[0] : undefined;
    if (expression?.type !== 'augmented_assignment') continue;
    const left = expression.childForFieldName('left');
    // `global_step += 1`, `self.step += 1`, `state["step"] += 1`.
    const key = left?.type === 'subscript' ? /^\[\s*["'](\w+)["']\s*\]$/.exec(left.text.slice(left.childForFieldName('value')?.text.length ?? 0))?.[1] : dottedName(left ?? null)?.split('.').pop();
    if (left && STEP_COUNTER.test(key ?? '') && expression.childForFieldName('operator')?.text === '+=') names.add(left.text);
  }
  return names;
}

/** Whether a statement counts or checks optimizer steps: a counter's increment, or an `if` that reads a counter. */
function countsSteps(statement: Node, counters: Set<string>): boolean {
  if (counters.size === 0) return false;
  const expression = statement.type === 'expression_statement' ? statement.namedChildren[0] : undefined;
  if (expression?.type === 'augmented_assignment') return counters.has(expression.childForFieldName('left')?.text ?? '');
  if (statement.type !== 'if_statement') return false;
  const condition = statement.childForFieldName('condition')?.text ?? '';
  return [...counters].some((name) => new RegExp(`(^|[^\\w.])${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}($|[^\\w])`).test(condition));
}

/**
 * A statement that belongs with the optimizer step: a step-related call (step, clipping, scaler, scheduler, clearing),
 * a counter's increment or a check of it, or an `if` that only guards such statements (`if args.clip_grad: clip...`,
 * `if scheduler is not None: scheduler.step()`).
 */
function belongsWithStep(model: SemanticModel, statement: Node, counters: Set<string>): boolean {
  const call = statementCall(statement);
  if ((call && isStepRelatedCall(model, call)) || countsSteps(statement, counters)) return true;
  if (statement.type !== 'if_statement' || statement.namedChildren.some((child) => child.type === 'elif_clause' || child.type === 'else_clause')) return false;
  const body = statement.childForFieldName('consequence');
  const inner = body ? statementsOf(body) : [];
  return inner.length > 0 && inner.every((child) => belongsWithStep(model, child, counters));
}

/**
 * The loop's own step number: the index of `for i, batch in enumerate(loader, start)`, or the variable of a
 * `for it in range(max_iters)` loop that fetches its batches itself (then each iteration is one optimizer step, and
 * the range is stretched to cover the micro-batches).
 */
function loopIndex(loop: Node): { index: Node; start?: Node; rangeStop?: Node } | undefined {
  const right = loop.type === 'for_statement' ? loop.childForFieldName('right') : null;
  const left = loop.childForFieldName('left');
  if (right?.type !== 'call') return undefined;
  const args = callArguments(right);
  const callee = right.childForFieldName('function')?.text;
  if (callee === 'range' && left?.type === 'identifier' && args.positional.length === 1 && args.keywords.size === 0) return { index: left, rangeStop: args.positional[0] };
  if (callee !== 'enumerate') return undefined;
  const first = left?.type === 'pattern_list' || left?.type === 'tuple_pattern' ? left.namedChildren[0] : undefined;
  if (first?.type !== 'identifier') return undefined;
  return { index: first, start: args.keywords.get('start') ?? args.positional[1] };
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

/** Consecutive runs of body statements that belong with the optimizer step (step counters and their checks too). */
function stepRuns(model: SemanticModel, statements: Node[], counters: Set<string>): Node[][] {
  const runs: Node[][] = [];
  let current: Node[] = [];
  for (const statement of statements) {
    if (belongsWithStep(model, statement, counters)) current.push(statement);
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
  if (accumulatesAlready(model) || usesName(model, STEPS) || usesName(model, COUNTER) || usesName(model, MICRO_INDEX)) return [];
  // A loop with an `else:` runs code after the last batch that the flush would have to precede; a `return` in the
  // loop would skip the flush of the last micro-batches (no optimizer step for them at all).
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
  const counters = stepCounters(loop.body);
  // The enumerate index numbered batches, one per optimizer step: it becomes the number of the accumulation window
  // (`step = micro_index // accumulation_steps`), so max-steps stops and logging keyed on it still count optimizer
  // steps, and what checks it moves with the step.
  const enumerated = loopIndex(loop.node);
  if (enumerated) counters.add(enumerated.index.text);
  const runs = stepRuns(model, statements.filter((statement) => statement.startIndex >= backwardStatement.endIndex), counters);
  const moved = [...clearsBefore, ...runs.flat()];
  // A `return` that runs with the optimizer step (a max_steps stop moved under its condition) ends on a full
  // window; one anywhere else would skip the step of the micro-batches accumulated so far.
  const returns = loop.body.descendantsOfType('return_statement');
  if (returns.some((ret) => !moved.some((statement) => statement.startIndex <= ret.startIndex && ret.endIndex <= statement.endIndex))) return [];
  if (!steps.every((call) => moved.some((statement) => statementCall(statement) === call))) return [];
  if (moved.some((statement) => !standsAlone(statement) || holdsMultiLineString(statement))) return [];
  const scaled = scaledBackward(model, backward);
  if (!scaled) return [];

  const unit = unitOf(text);
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const bodyIndent = lineIndent(backwardStatement);
  const loopIndent = lineIndent(loop.node);
  // Accumulation saves memory only by making each micro-batch smaller: offered only where the batch size is one
  // literal of this file that N divides, so the effective batch stays what it was.
  const source = batchSource(model, context.program, loop.node);
  // A `for it in range(n)` loop runs n·K micro-steps only where its batches come from a loader it pulls from; one
  // that slices data by its own index would see the same slices K times.
  if (enumerated?.rangeStop && !source?.pulled) return [];
  const batch = source?.value;
  // `len(train_loader)` before the loop (a schedule's length, a step budget) counted batches; it counts micro-batches
  // now, so it is divided back, and the number of steps is defined before its first use.
  const counted = source?.loader ? loaderLengths(model, context.program, loop, source.loader, source.loaderValue) : { found: [], elsewhere: false };
  if (counted === undefined) return [];
  const lengths = counted.found;
  const headerAnchor = lengths.length > 0 && !counted.elsewhere ? lengths[0]!.statement : loop.outermost;
  const optimizers = [...new Set(steps.map((call) => {
    const receiver = callReceiver(call);
    return receiver && model.isScalerRef(receiver) ? callArguments(call).positional[0]?.text : receiver?.text;
  }))];
  if (optimizers.some((name) => !name)) return [];
  const lines = linesOf(text);
  const refactorings: Refactoring[] = [];
  for (const n of context.accumulation !== undefined ? [context.accumulation] : ACCUMULATION_CHOICES) {
    const divides = batch !== undefined && Number.isInteger(batch) && batch % n === 0 && batch / n >= 1;
    if (!divides) continue;
    const edits: TextEdit[] = [];
    const comment = t('effective batch size: {0} x {1} = {2} samples per optimizer step', batch! / n, n, batch!);
    // The number of steps before its first use (the loop, or a `len(loader)` above it), the counter before the loop.
    // Where another function counts the loader's batches too, the number of steps is a module-level setting both read.
    const stepsLine = `${counted.elsewhere ? '' : lineIndent(headerAnchor)}${STEPS} = ${n}  # ${comment}`;
    const counter = `${loopIndent}${COUNTER} = 0`;
    const beforeOutermost = headerAnchor.id === loop.outermost.id && !counted.elsewhere ? [stepsLine] : [];
    if (counted.elsewhere) edits.push(insertLinesBefore(text, rowAfterImports(model), [stepsLine]));
    else if (headerAnchor.id !== loop.outermost.id) edits.push(insertLinesBefore(text, lineAbove(text, headerAnchor), [stepsLine]));
    if (loop.outermost.id === loop.node.id) beforeOutermost.push(counter);
    else edits.push(insertLinesBefore(text, lineAbove(text, loop.node), [counter]));
    if (beforeOutermost.length > 0) edits.push(insertLinesBefore(text, lineAbove(text, loop.outermost), beforeOutermost));
    edits.push(source!.divide(n));
    if (enumerated) {
      const name = enumerated.index.text;
      const start = enumerated.start?.text;
      const window = start && start !== '0' ? `(${MICRO_INDEX} - ${primary(enumerated.start!)}) // ${STEPS} + ${primary(enumerated.start!)}` : `${MICRO_INDEX} // ${STEPS}`;
      edits.push(replaceNode(enumerated.index, MICRO_INDEX));
      if (enumerated.rangeStop) edits.push(replaceNode(enumerated.rangeStop, `${primary(enumerated.rangeStop)} * ${STEPS}`));
      const firstStatement = statements[0]!;
      edits.push(insertLinesBefore(text, firstStatement.startPosition.row, [`${bodyIndent}${name} = ${window}  # ${t('the optimizer step this micro-batch belongs to')}`]));
    }
    for (const { call } of lengths) edits.push(replaceNode(call, `-(-${call.text} // ${STEPS})`));
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
    // The micro-batches left at the end of the epoch still update the weights; their gradients were divided by N
    // but they are fewer than N, so they are scaled back to the mean over the micro-batches there were.
    const inner = loopIndent + unit;
    const rescale = optimizers.flatMap((optimizer) => [
      `${inner}for group in ${optimizer}.param_groups:`,
      `${inner}${unit}for p in group["params"]:`,
      `${inner}${unit}${unit}if p.grad is not None:`,
      `${inner}${unit}${unit}${unit}p.grad.mul_(${STEPS} / (${COUNTER} % ${STEPS}))`,
    ]);
    const flush = runs.flatMap((run) => reindent(text, run[0]!.startPosition.row, run[run.length - 1]!.endPosition.row, bodyIndent, inner));
    edits.push(insertLinesAfter(text, loop.node.endPosition.row, [`${loopIndent}${condition('!=')}`, ...rescale, ...flush]));
    refactorings.push({ title: t('Add gradient accumulation ({0} steps, micro-batch {1} instead of {2})', n, batch! / n, batch!), edits });
  }
  return refactorings;
}
