// A step argument the program model could not size because the script's own function builds it from data-dependent
// steps (a graph's edge list: the pairs a boolean mask keeps, repeated per graph with offsets): its assignment's call
// is run again inside the forward trace, where tensors carry shapes, so `h[src]` gathers as many rows as there are
// edges rather than the input's.
import type { ProgramModel } from '../engine/program/interpreter';
import type { PyNode } from '../engine/program/node';
import type { TensorTracer, TensorValue, Value } from '../engine/program/values';
import { enclosingLoops } from '../engine/syntax';

/** The function or module whose code holds `node`. */
function enclosingScope(node: PyNode): PyNode | undefined {
  for (let current = node.parent; current; current = current.parent) {
    if (current.type === 'function_definition' || current.type === 'module') return current;
  }
  return undefined;
}

/** Where `name` stands in an assignment's target: undefined for the whole target, the position in a tuple target. */
function targetPosition(left: PyNode, name: string): number | undefined | null {
  if (left.type === 'identifier') return left.text === name ? undefined : null;
  if (left.type !== 'pattern_list' && left.type !== 'tuple_pattern') return null;
  const position = left.namedChildren.findIndex((part) => part?.type === 'identifier' && part.text === name);
  return position >= 0 ? position : null;
}

/** The last assignment to `name` before `site` in its scope (not in a nested function or class), with the position. */
export function lastAssignment(site: PyNode, name: string): { right: PyNode; position: number | undefined } | undefined {
  const scope = enclosingScope(site);
  if (!scope) return undefined;
  let found: { right: PyNode; position: number | undefined } | undefined;
  const visit = (node: PyNode): void => {
    if (node.startIndex >= site.startIndex) return;
    if (node !== scope && (node.type === 'function_definition' || node.type === 'class_definition')) return;
    if (node.type === 'assignment') {
      const left = node.childForFieldName('left');
      const right = node.childForFieldName('right');
      const position = left ? targetPosition(left, name) : null;
      if (right && position !== null) found = { right, position };
    }
    for (const child of node.namedChildren) if (child) visit(child);
  };
  visit(scope);
  return found;
}

/** The values the interpreter found for the names a call's arguments read (`cfg` in `f(cfg["n"], device)`). */
function argumentNames(program: ProgramModel, call: PyNode): Map<string, Value> {
  const names = new Map<string, Value>();
  const visit = (node: PyNode): void => {
    if (node.type === 'identifier') {
      const value = program.valueOf(node);
      if (value && value.kind !== 'unknown') names.set(node.text, value);
    }
    for (const child of node.namedChildren) if (child) visit(child);
  };
  const args = call.childForFieldName('arguments');
  if (args) visit(args);
  return names;
}

/** The call of one of the script's own functions that assigns a step argument before the step (see tracedDefinition). */
function definingCall(program: ProgramModel, argument: PyNode, site: PyNode): { call: PyNode; position: number | undefined } | undefined {
  if (argument.type !== 'identifier') return undefined;
  const assignment = lastAssignment(site, argument.text);
  if (assignment?.right.type !== 'call') return undefined;
  const callee = program.valueOf(assignment.right.childForFieldName('function'));
  return callee?.kind === 'function' ? { call: assignment.right, position: assignment.position } : undefined;
}

/**
 * Whether a step argument is built by one of the script's functions once, before the loop that runs the step (a full
 * graph's edge list): the same tensor at every step, whatever the batch.
 */
export function builtBeforeLoop(program: ProgramModel, argument: PyNode, site: PyNode): boolean {
  const defining = definingCall(program, argument, site);
  if (!defining) return false;
  const loops = new Set(enclosingLoops(site).map((loop) => loop.id));
  return loops.size > 0 && !enclosingLoops(defining.call).some((loop) => loops.has(loop.id));
}

/**
 * Whether a step argument is built whole for the step by one of the script's functions (a batch of graphs' edge
 * list): the samples' rows it indexes are then the batch's, folded into one axis.
 */
export function definedByScript(program: ProgramModel, argument: PyNode, site: PyNode): boolean {
  return definingCall(program, argument, site) !== undefined;
}

/**
 * The tensor a step argument holds, where it is a variable (`src` of `src, dst = build_edges(n, graphs, device)`)
 * assigned from a call of one of the script's functions before the step: that call run in the trace. Undefined where
 * the variable is assigned otherwise or the traced call gives no tensor.
 */
export function tracedDefinition(program: ProgramModel, argument: PyNode, site: PyNode, tracer: TensorTracer): TensorValue | undefined {
  const defining = definingCall(program, argument, site);
  if (!defining) return undefined;
  const result = program.evaluateTraced(defining.call, argumentNames(program, defining.call), tracer);
  const value = defining.position === undefined ? result : result?.kind === 'list' ? result.items[defining.position] : undefined;
  return value?.kind === 'tensor' ? value : undefined;
}
