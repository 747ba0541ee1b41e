// The step's calls of the model's other methods on what its traced call returned: an encoder-decoder run as
// `z = model.encode(x); out = model.decode(z)`, a link predictor's `h = model.encode(graph)` scored by
// `model.score(h, triples)`. Tracing only the call the step's forward is read from leaves out everything the second
// method saves for backward (the score's gathered rows and their products, each the size of the triples times the
// hidden width), so each such call is traced after it in the same trace, with the names of earlier calls' results
// bound to what those returned and the step's other tensors (the triples the loop draws) built by running the
// assignments that make them, back to tensors whose shape the script gives.
import type { ProgramModel } from '../engine/program/interpreter';
import type { PyNode } from '../engine/program/node';
import { madeTensorIsInteger, madeTensorShape, type Value } from '../engine/program/values';
import { enclosingLoops } from '../engine/syntax';
import { underNoGrad } from '../engine/program/grad-mode';
import type { ForwardTrace } from './forward-trace';
import { lastAssignment, tracedDefinition } from './traced-definitions';

/** How many assignments back a step tensor is followed to the tensors it is made from. */
const MAX_DEFINITION_DEPTH = 6;

export interface FollowingCalls {
  /** The follow-up calls traced, by node id (their statements are no loss over the traced call's output). */
  calls: Set<number>;
  /** The names those calls' results are bound to, with their traced values. */
  names: Map<string, Value>;
}

/**
 * Traces in `trace`, after the call at `site` that returned `returned`, the step's calls of `module`'s own methods
 * that read what an earlier one of them returned (in the same loop, with autograd on). Undefined where there is none.
 */
export function traceFollowingMethodCalls(program: ProgramModel, module: Value, site: PyNode, returned: Value | undefined,
  trace: ForwardTrace): FollowingCalls | undefined {
  if (!returned || module.kind !== 'object') return undefined;
  const target = resultName(site);
  if (!target) return undefined;
  const loop = enclosingLoops(site)[0];
  if (!loop) return undefined;
  const names = new Map<string, Value>([[target, returned]]);
  const calls = new Set<number>();
  const candidates = (program.moduleMethodCalls.get(module) ?? [])
    .filter(({ node }) => node.startIndex > site.endIndex && enclosingLoops(node)[0]?.id === loop.id && !underNoGrad(node))
    .sort((a, b) => a.node.startIndex - b.node.startIndex);
  for (const { method, node } of candidates) {
    const argumentNodes = node.childForFieldName('arguments')?.namedChildren.filter((n): n is PyNode => !!n && n.type !== 'comment') ?? [];
    // Only a call on what an earlier one returned continues the step's graph (a second encode of other data is
    // another forward, sized with the model's).
    if (argumentNodes.some((n) => n.type === 'keyword_argument' || n.type === 'list_splat' || n.type === 'dictionary_splat')) continue;
    if (!argumentNodes.some((n) => readsAny(n, names))) continue;
    const args = argumentNodes.map((n) => stepValue(program, n, node, names, trace, 0) ?? { kind: 'unknown' } as Value);
    const result = program.trace(module, args, trace, method);
    if (!result) continue;
    calls.add(node.id);
    const bound = resultName(node);
    if (bound) names.set(bound, result);
  }
  names.delete(target);
  return calls.size > 0 ? { calls, names } : undefined;
}

/**
 * Whether a call of a module reads what an earlier call of it in the same loop returned (`model.score(h, triples)`
 * after `h = model.encode(...)`): a call that continues the step's graph, not the one its forward is read from.
 */
export function continuesEarlierCall(call: PyNode, others: readonly PyNode[]): boolean {
  const loop = enclosingLoops(call)[0];
  if (!loop) return false;
  const argumentsNode = call.childForFieldName('arguments');
  if (!argumentsNode) return false;
  return others.some((other) => {
    if (other.id === call.id || other.endIndex >= call.startIndex || enclosingLoops(other)[0]?.id !== loop.id) return false;
    const name = resultName(other);
    return name !== undefined && readsAny(argumentsNode, new Map([[name, { kind: 'unknown' }]]));
  });
}

/** The name a call's result is assigned to (`h = model.encode(...)`). */
function resultName(call: PyNode): string | undefined {
  const assignment = call.parent;
  if (assignment?.type !== 'assignment' || assignment.childForFieldName('right')?.id !== call.id) return undefined;
  const left = assignment.childForFieldName('left');
  return left?.type === 'identifier' ? left.text : undefined;
}

/**
 * The value of a step expression at `site`, in the trace: names of `bound` as given, a tensor the script makes with
 * its whole shape given as that, a variable one of the script's functions builds before the step as that call
 * traced, any other variable the step assigns as its assignment's right side, evaluated the same way.
 */
function stepValue(program: ProgramModel, expression: PyNode, site: PyNode, bound: ReadonlyMap<string, Value>, trace: ForwardTrace,
  depth: number): Value | undefined {
  const names = new Map(bound);
  for (const identifier of expression.type === 'identifier' ? [expression] : expression.descendantsOfType('identifier')) {
    if (!identifier || names.has(identifier.text) || !readsVariable(identifier)) continue;
    const value = variableValue(program, identifier, site, names, trace, depth);
    if (value) names.set(identifier.text, value);
  }
  return program.evaluateTraced(expression, names, trace);
}

function variableValue(program: ProgramModel, identifier: PyNode, site: PyNode, names: ReadonlyMap<string, Value>, trace: ForwardTrace,
  depth: number): Value | undefined {
  const known = program.valueOf(identifier);
  if (known?.kind === 'call') {
    const shape = madeTensorShape(known);
    if (shape) return trace.input(shape, madeTensorIsInteger(known));
  }
  if (known && known.kind !== 'unknown' && known.kind !== 'call') return known;
  const defined = tracedDefinition(program, identifier, site, trace);
  if (defined) return defined;
  if (depth >= MAX_DEFINITION_DEPTH) return undefined;
  const assignment = lastAssignment(site, identifier.text);
  if (!assignment) return undefined;
  const value = stepValue(program, assignment.right, assignment.right, names, trace, depth + 1);
  if (assignment.position === undefined) return value;
  return value?.kind === 'list' ? value.items[assignment.position] : undefined;
}

/** Whether an identifier reads a variable (not an attribute's or a keyword's name). */
function readsVariable(identifier: PyNode): boolean {
  const parent = identifier.parent;
  if (parent?.type === 'attribute' && parent.childForFieldName('attribute')?.id === identifier.id) return false;
  if (parent?.type === 'keyword_argument' && parent.childForFieldName('name')?.id === identifier.id) return false;
  return true;
}

function readsAny(node: PyNode, names: ReadonlyMap<string, Value>): boolean {
  if (node.type === 'identifier') return names.has(node.text);
  return node.descendantsOfType('identifier').some((identifier) => !!identifier && names.has(identifier.text));
}
