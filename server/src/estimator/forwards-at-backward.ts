// How many forwards' graphs are alive when the step's backward starts, and why. One backward runs through every
// graph its loss was built from: a triplet's three calls of the model, a wrapper of a hub model called for each
// sentence of a pair, the members of a stacked ensemble each running the batch, or forwards run in loops before it
// (a meta-learning step's inner steps and query forwards, read by kept-graphs.ts). Each of those is read here, in
// that order of precedence, so that the estimate asks one place.
import type { ProgramModel } from '../engine/program/interpreter';
import { lookupClassAttribute } from '../engine/program/interpreter';
import type { PyNode as Node } from '../engine/program/node';
import { underNoGrad } from '../engine/program/grad-mode';
import type { Value } from '../engine/program/values';
import { enclosingLoops } from '../engine/syntax';
import { keepsGraphsOfLoops, keptRows, StepGraphs, type KeptGraphs } from './kept-graphs';
import { wrappersHolding } from './module-tree';
import { sampleArguments } from './dataset-samples';
import type { Located } from './types';

/** What the step's model is, as the detection found it: the calls to read and the values and names it goes by. */
export interface StepModel {
  program: ProgramModel;
  root: Node;
  /** Every call of the script, in order. */
  calls: readonly Node[];
  /** The calls of the trained model through its variables (`model(x)`), and those variables. */
  forwards: readonly Node[];
  variables: ReadonlySet<string>;
  /** The model's values (the script's trained modules, a hub or library model): the forwards kept-graphs.ts follows. */
  models: ReadonlySet<Value>;
  /** A hub model (`AutoModel.from_pretrained(...)`), which a module of the script may hold and call. */
  hub?: Value;
  /** The members of an ensemble stacked by torch.func (`stack_module_state(models)`), where there is one. */
  members?: number;
}

/**
 * `calls`: the model is called `forwards` times before one backward; `wrapper`: a module holding the hub model is
 * called so, each call running it as often as its forward calls it; `loops`: forwards run in loops before the
 * backward keep `graphs` (sized by their rows, not as whole batches); `one`: a single forward.
 */
export type ForwardsWhy = 'one' | 'calls' | 'wrapper' | 'loops';

export interface ForwardsAtBackward {
  why: ForwardsWhy;
  /** Forwards of one member whose graphs the backward runs through (kept runs, for `loops`). */
  forwards: number;
  /** Members of a stacked ensemble, each running every forward over the batch (1: no ensemble). */
  members: number;
  /**
   * Whole batches of the model's activations alive at the backward (TrainingConfig.forwardsPerBackward): forwards x
   * members; for `loops`, the members (the graphs' rows size the rest).
   */
  batches: number;
  /** 0-based line of the first forward counted. */
  line?: number;
  /** For `loops`: the forwards kept-graphs.ts read (see keptRows). */
  graphs?: KeptGraphs;
  /** The rows of the first forward the backward runs through, where its input was made with a shape. */
  rows?: Located<number>;
  /**
   * For `wrapper`: the token length of each run of the hub model, in order, where the data gives every one (a
   * late-interaction retriever encodes 32-token queries and 180-token passages with the same encoder).
   */
  lengths?: number[];
}

export function forwardsAtBackward(step: StepModel): ForwardsAtBackward {
  const members = Math.max(1, step.members ?? 1);
  const loops = graphsOfLoops(step);
  const one = { members, ...(loops.rows ? { rows: loops.rows } : {}) };
  if (loops.graphs) {
    const forwards = loops.graphs.value.forwards.reduce((sum, forward) => sum + forward.kept, 0);
    return { ...one, why: 'loops', forwards, batches: members, graphs: loops.graphs.value, ...(loops.graphs.line !== undefined ? { line: loops.graphs.line } : {}) };
  }
  // A forward in a branch whose condition is false (`if OFFLOAD: ... else: model(x)`) never runs.
  const called = calledBeforeBackward(step.calls, step.forwards.filter((call) => !step.program.neverRuns(call)), step.variables);
  const found = called ? { why: 'calls' as const, ...called } : step.hub ? wrapperCalls(step, step.hub) : undefined;
  if (!found) return { ...one, why: 'one', forwards: 1, batches: members };
  const lengths = 'lengths' in found ? found.lengths : undefined;
  return { ...one, why: found.why, forwards: found.value, batches: found.value * members, ...(found.line !== undefined ? { line: found.line } : {}),
    ...(lengths ? { lengths } : {}) };
}

/** Whether a name's text is `name`: compared only where the lengths agree (no text is cut out for the others). */
function named(node: Node, name: string): boolean {
  return node.endIndex - node.startIndex === name.length && node.text === name;
}

function isBackward(call: Node): boolean {
  const fn = call.childForFieldName('function');
  // Asked of every call, several times: a name, or an attribute not named `backward` (most calls), is answered
  // without the callee's text with its spaces removed.
  if (fn?.type === 'identifier') return named(fn, 'backward');
  if (fn?.type === 'attribute') {
    const attribute = fn.childForFieldName('attribute');
    if (!attribute || !named(attribute, 'backward')) return false;
  }
  return /(^|\.)backward$/.test(fn?.text.replace(/\s+/g, '') ?? '');
}

/** Whether a call is `name(...)` for one of the model's variables. */
function callsOneOf(call: Node, names: ReadonlySet<string>): boolean {
  const fn = call.childForFieldName('function');
  return fn?.type === 'identifier' && names.has(fn.text);
}

/**
 * The forwards in loops before a backward that keep more than one graph (see kept-graphs.ts): read for every
 * backward, the one that keeps the most rows; and the rows of the first forward any backward runs through.
 */
function graphsOfLoops(step: StepModel): { graphs?: Located<KeptGraphs>; rows?: Located<number> } {
  if (step.models.size === 0) return {};
  const reader = new StepGraphs(step.program, step.root, (value) => value !== undefined && step.models.has(value));
  let best: Located<KeptGraphs> | undefined;
  let bestRows = 0;
  let rows: Located<number> | undefined;
  for (const call of step.calls) {
    if (!isBackward(call) || underNoGrad(call)) continue;
    const graphs = reader.read(call);
    if (!graphs) continue;
    rows ??= graphs.forwards.find((forward) => forward.kept > 0 && forward.rows)?.rows;
    if (!keepsGraphsOfLoops(graphs)) continue;
    const kept = keptRows(graphs, 1).rows;
    if (kept > bestRows) [best, bestRows] = [{ value: graphs, line: graphs.forwards.find((f) => f.kept > 0)?.line ?? call.startPosition.row }, kept];
  }
  return { ...(best ? { graphs: best } : {}), ...(rows ? { rows } : {}) };
}

/**
 * How many forwards run before one backward. Several models chained in one step (`predictor(online(view))` on two
 * views) run as often as the least-called of them: a GAN's generator once and its critic twice is one step's graph.
 * Found where at least `atLeast` run (one: the count of a wrapper's calls, multiplied by what each runs inside).
 */
function calledBeforeBackward(calls: readonly Node[], forwards: readonly Node[], models: ReadonlySet<string>, atLeast = 2): Located<number> | undefined {
  if (models.size > 1) {
    const perModel = [...models].map((name) => calledBeforeBackward(calls, forwards.filter((call) => callsOneOf(call, new Set([name]))), new Set([name]), atLeast));
    return perModel.every((found) => found !== undefined) ? perModel.reduce((least, found) => (found!.value < least!.value ? found : least)) : undefined;
  }
  const loopOf = (node: Node): Node | undefined => enclosingLoops(node)[0];
  let previousBackward = -1;
  for (const backward of calls) {
    if (!isBackward(backward)) continue;
    const loop = loopOf(backward);
    const from = Math.max(previousBackward, loop?.startIndex ?? -1);
    previousBackward = backward.startIndex;
    if (!loop) continue;
    const before = oneBranchEach(forwards.filter((call) => call.startIndex > from && call.startIndex < backward.startIndex &&
      loopOf(call)?.id === loop.id && !underNoGrad(call)));
    if (before.length >= atLeast) return { value: before.length, line: before[0]!.startPosition.row };
  }
  return undefined;
}

/**
 * The calls that one pass through the code runs together: of calls in different branches of one `if` (the same
 * forward written once with an option on and once with it off), only the first branch's.
 */
function oneBranchEach(calls: readonly Node[]): Node[] {
  const kept: Node[] = [];
  for (const call of calls) if (!kept.some((other) => inOtherBranches(other, call))) kept.push(call);
  return kept;
}

/** Whether two nodes sit in different branches (if, elif, else) of one if statement. */
function inOtherBranches(a: Node, b: Node): boolean {
  const ancestors = new Set<number>();
  for (let current = a.parent; current; current = current.parent) ancestors.add(current.id);
  let common = b.parent;
  while (common && !ancestors.has(common.id)) common = common.parent;
  return common?.type === 'if_statement';
}

/**
 * How many times one backward's graphs ran a hub model that a module of the script holds (`self.bert =
 * AutoModel.from_pretrained(...)` in a sentence encoder): the step calls the wrapper (a triplet's anchor, positive
 * and negative), and each call runs the hub model as often as the wrapper's forward calls the attribute holding it.
 */
function wrapperCalls(step: StepModel, hub: Value): (Located<number> & { why: 'wrapper'; lengths?: number[] }) | undefined {
  const { program, calls } = step;
  for (const wrapper of wrappersHolding(program, hub)) {
    const attributes = new Set([...wrapper.attrs].filter(([, value]) => value === hub).map(([name]) => `self.${name}`));
    const forward = wrapper.cls ? lookupClassAttribute(wrapper.cls, 'forward') : undefined;
    const runs = forward?.kind === 'function' ? hubRuns(forward.node, attributes, (name) => {
      const method = wrapper.cls ? lookupClassAttribute(wrapper.cls, name) : undefined;
      return method?.kind === 'function' ? method.node : undefined;
    }) : [];
    const inner = runs.length;
    // The variables the step calls it through (not `self` inside its own methods).
    const names = new Set([...program.assigned].filter(([name, values]) => name !== 'self' && values.includes(wrapper)).map(([name]) => name));
    const stepCalls = calls.filter((call) => callsOneOf(call, names));
    const outer = names.size > 0 ? calledBeforeBackward(calls, stepCalls, names, 1) : undefined;
    if (outer && outer.value * Math.max(1, inner) > 1) {
      const lengths = outer.value === 1 && forward?.kind === 'function' ? runLengths(step, forward.node, runs, stepCalls) : undefined;
      return { why: 'wrapper', value: outer.value * Math.max(1, inner), line: outer.line, ...(lengths ? { lengths } : {}) };
    }
  }
  return undefined;
}

/** One run of the hub model inside a wrapper's forward: the call, and the forward's expression of its token ids. */
interface HubRun { call: Node; ids: Node | undefined }

/**
 * The runs of the hub model a wrapper's forward makes: its calls of the attribute holding it, and its calls of its
 * own methods that call it (`Q = self.encode(q_ids, q_mask)`, once for each call), each with the expression of
 * forward its token ids come from.
 */
function hubRuns(forward: Node, attributes: ReadonlySet<string>, method: (name: string) => Node | undefined): HubRun[] {
  const runs: HubRun[] = [];
  for (const call of forward.descendantsOfType('call')) {
    const callee = call?.childForFieldName('function')?.text ?? '';
    if (!call) continue;
    if (attributes.has(callee)) {
      runs.push({ call, ids: tokenIdsArgument(call) });
      continue;
    }
    const own = /^self\.(\w+)$/.exec(callee)?.[1];
    const body = own !== undefined && own !== 'forward' ? method(own) : undefined;
    if (!body) continue;
    const inside = body.descendantsOfType('call').filter((c) => attributes.has(c?.childForFieldName('function')?.text ?? ''));
    const parameters = parameterNames(body).filter((name) => name !== 'self');
    for (const hubCall of inside) {
      // The method's parameter its hub call takes the ids from, and what forward passes for it.
      const ids = hubCall ? tokenIdsArgument(hubCall) : undefined;
      const index = ids?.type === 'identifier' ? parameters.indexOf(ids.text) : -1;
      const given = index >= 0 ? positionalArguments(call)[index] : undefined;
      runs.push({ call, ids: given });
    }
  }
  return runs;
}

/** The token ids a hub model's call is given: `input_ids=`, else its first positional argument. */
function tokenIdsArgument(call: Node): Node | undefined {
  const args = call.childForFieldName('arguments')?.namedChildren ?? [];
  const keyword = args.find((arg) => arg?.type === 'keyword_argument' && arg.childForFieldName('name')?.text === 'input_ids');
  return keyword?.childForFieldName('value') ?? positionalArguments(call)[0];
}

function positionalArguments(call: Node): Node[] {
  return (call.childForFieldName('arguments')?.namedChildren ?? []).filter((arg): arg is Node => !!arg && arg.type !== 'keyword_argument' && arg.type !== 'comment');
}

function parameterNames(fn: Node): string[] {
  return (fn.childForFieldName('parameters')?.namedChildren ?? []).map((p) => (p?.type === 'identifier' ? p.text : p?.childForFieldName('name')?.text ?? p?.namedChildren[0]?.text ?? ''));
}

/**
 * The token length of each run, where every run's ids are a parameter of forward the step's one call gives a tensor
 * of the data (`model(q, qm, d, dm)` in the loader's loop): the last size of that tensor. Undefined otherwise.
 */
function runLengths(step: StepModel, forward: Node, runs: readonly HubRun[], stepCalls: readonly Node[]): number[] | undefined {
  const stepCall = stepCalls.find((call) => !underNoGrad(call));
  if (!stepCall || runs.length < 2) return undefined;
  const parameters = parameterNames(forward).filter((name) => name !== 'self');
  const given = positionalArguments(stepCall);
  const lengths = runs.map((run) => {
    const index = run.ids?.type === 'identifier' ? parameters.indexOf(run.ids.text) : -1;
    const argument = index >= 0 ? given[index] : undefined;
    const shape = argument ? sampleArguments(step.program, stepCall, [argument])?.[0]?.shape : undefined;
    return shape && shape.length === 2 ? shape[1] : undefined;
  });
  return lengths.every((length): length is number => length !== undefined && length > 0) ? lengths : undefined;
}
