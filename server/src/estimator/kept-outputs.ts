// Outputs a batch loop keeps without a graph: an evaluation that appends every batch's predictions (under no_grad,
// or detached) to a list on the GPU, for a metric computed after the loop. No rule flags it (nothing keeps a graph),
// yet every batch's tensor is real memory until the loop ends, and a `torch.cat` of the list after the loop holds it
// twice. The rules' leaks (OOM101/OOM104) keep graphs; these keep the outputs themselves.
import type { ProgramModel } from '../engine/program/interpreter';
import type { PyNode } from '../engine/program/node';
import { underNoGrad } from '../engine/program/grad-mode';
import { enclosingScope } from '../engine/syntax';
import { numberOf, type Value } from '../engine/program/values';
import { loopLoader, loopBatchSize } from './growth';
import { treeIndex } from '../engine/program/tree-index';

/** One place a batch loop keeps a model output per batch (plain data: the estimate's configuration carries it). */
export interface KeptOutputSite {
  /** 0-based line of the `append` (or `+=`) that keeps it. */
  line: number;
  /** The batch size of the loop's loader, when it differs from the detected one or is known. */
  batchSize?: number;
  /** How many batches the loop runs, where the script fixes it (a `break` at a count, a dataset of known length). */
  batches?: number;
  /** The kept list is concatenated after the loop (`torch.cat(kept)`): both are alive at once. */
  concatenated: boolean;
}

/** Methods and functions that give a tensor of the output's shape: what a kept prediction is made with. */
const SAME_SHAPE = /^(softmax|log_softmax|sigmoid|exp|tanh|relu|float|half|bfloat16|double|detach|clone|contiguous|cuda|abs|neg|clamp|clip)$/;
const SAME_SHAPE_FUNCTION = /^(torch|F|torch\.nn\.functional|nn\.functional)\.(softmax|log_softmax|sigmoid|exp|tanh|relu)$/;
/** The output's field that holds the prediction: `out["out"]` (torchvision segmentation), `out.logits` (Hugging Face). */
const OUTPUT_FIELD = /^(logits|last_hidden_state|out)$/;
const CONCATENATION = /^(torch\.)?(cat|concat|concatenate|stack|vstack|hstack)$/;
const NAME_FOLLOW_DEPTH = 4;

/** The value a name has in a function: the first occurrence of it that the program model evaluated (loop bodies over a loader never run). */
function nameValue(program: ProgramModel, scope: PyNode, name: string): Value | undefined {
  for (const identifier of scope.descendantsOfType('identifier')) {
    if (identifier?.text !== name) continue;
    const value = program.valueOf(identifier);
    if (value && value.kind !== 'unknown') return value;
  }
  return undefined;
}

/** The last assignment `name = ...` in `body` before `before`: its right side. */
function assignedBefore(body: PyNode, name: string, before: PyNode): PyNode | undefined {
  let found: PyNode | undefined;
  for (const assignment of body.descendantsOfType('assignment')) {
    if (!assignment || assignment.startIndex >= before.startIndex) break;
    if (assignment.childForFieldName('left')?.text === name) found = assignment.childForFieldName('right') ?? undefined;
  }
  return found;
}

interface Chain {
  /** The model's forward the kept value is made from. */
  forward: PyNode;
  detached: boolean;
}

/**
 * Follows a kept expression back to the model's forward through shape-keeping steps (`model(x)["out"].softmax(1)`,
 * `torch.sigmoid(out.logits)`, a name bound earlier in the loop body); anything else (an argmax, `.cpu()`) has
 * another size or another place, and is not followed.
 */
function chainToForward(node: PyNode, body: PyNode, isModel: (callee: PyNode) => boolean, depth = 0): Chain | undefined {
  switch (node.type) {
    case 'parenthesized_expression':
      return node.namedChildren[0] ? chainToForward(node.namedChildren[0], body, isModel, depth) : undefined;
    case 'identifier': {
      if (depth >= NAME_FOLLOW_DEPTH) return undefined;
      const right = assignedBefore(body, node.text, node);
      return right ? chainToForward(right, body, isModel, depth + 1) : undefined;
    }
    case 'subscript': {
      const index = node.childForFieldName('subscript');
      const field = index?.type === 'string' ? index.text.replace(/^['"]|['"]$/g, '') : undefined;
      const value = node.childForFieldName('value');
      return field && OUTPUT_FIELD.test(field) && value ? chainToForward(value, body, isModel, depth) : undefined;
    }
    case 'attribute': {
      const object = node.childForFieldName('object');
      return object && OUTPUT_FIELD.test(node.childForFieldName('attribute')?.text ?? '') ? chainToForward(object, body, isModel, depth) : undefined;
    }
    case 'call': {
      const fn = node.childForFieldName('function');
      if (!fn) return undefined;
      if (isModel(fn)) return { forward: node, detached: false };
      const first = node.childForFieldName('arguments')?.namedChildren.find((arg) => arg?.type !== 'keyword_argument' && arg?.type !== 'comment');
      if (SAME_SHAPE_FUNCTION.test(fn.text)) return first ? chainToForward(first, body, isModel, depth) : undefined;
      if (fn.type !== 'attribute') return undefined;
      const method = fn.childForFieldName('attribute')?.text ?? '';
      const receiver = fn.childForFieldName('object');
      // `.to(device)` keeps it where it is (on the GPU); `.to("cpu")`, `.cpu()` and `.item()` take it off.
      const toGpu = method === 'to' && !/cpu/.test(node.childForFieldName('arguments')?.text ?? '');
      if (!receiver || !(SAME_SHAPE.test(method) || toGpu)) return undefined;
      const inner = chainToForward(receiver, body, isModel, depth);
      return inner && { ...inner, detached: inner.detached || method === 'detach' };
    }
    default:
      return undefined;
  }
}

/** The index name of `for i, batch in enumerate(loader)`. */
function enumerateIndex(loop: PyNode): string | undefined {
  const right = loop.childForFieldName('right');
  if (right?.type !== 'call' || right.childForFieldName('function')?.text !== 'enumerate') return undefined;
  const left = loop.childForFieldName('left');
  const first = left?.type === 'pattern_list' || left?.type === 'tuple_pattern' ? left.namedChildren[0] : undefined;
  return first?.type === 'identifier' ? first.text : undefined;
}

/** `if i == N: break` (or `i >= N`, `i > N`) in the loop's body: the loop runs N batches (N + 1 for `>`). */
function batchesAtBreak(program: ProgramModel, loop: PyNode, body: PyNode): number | undefined {
  const index = enumerateIndex(loop);
  if (!index) return undefined;
  for (const statement of body.namedChildren) {
    if (statement?.type !== 'if_statement') continue;
    const consequence = statement.childForFieldName('consequence');
    if (!consequence?.namedChildren.some((child) => child?.type === 'break_statement')) continue;
    const condition = statement.childForFieldName('condition');
    if (condition?.type !== 'comparison_operator') continue;
    const [left, right] = [condition.namedChildren[0], condition.namedChildren[1]];
    const operator = condition.children.find((child) => child && /^(==|>=|>)$/.test(child.type))?.type;
    if (!left || !right || left.text !== index) continue;
    const count = numberOf(nameValueOf(program, right));
    if (count === undefined || count < 0) continue;
    if (operator === '==' || operator === '>=') return count;
    if (operator === '>') return count + 1;
  }
  return undefined;
}

/** A value the program model knows for an expression, or for the name it is (the loop body itself never ran). */
function nameValueOf(program: ProgramModel, node: PyNode): Value | undefined {
  const value = program.valueOf(node);
  if (value && value.kind !== 'unknown') return value;
  return node.type === 'identifier' ? nameValue(program, enclosingScope(node), node.text) : undefined;
}

/** The batches a DataLoader gives: its dataset's `__len__` over the batch size (rounded up unless drop_last). */
function loaderBatches(program: ProgramModel, loop: PyNode): number | undefined {
  const { value } = loopLoader(program, loop);
  if (value?.kind !== 'call' || !/(^|\.)DataLoader$/.test(value.path)) return undefined;
  const dataset = value.kwargs.get('dataset') ?? value.args[0];
  const batch = loopBatchSize(program, loop);
  if (dataset?.kind !== 'object' || dataset.role !== 'instance' || batch === undefined) return undefined;
  const length = program.lengthOf(dataset);
  if (length === undefined || length <= 0) return undefined;
  const dropLast = value.kwargs.get('drop_last');
  return dropLast?.kind === 'bool' && dropLast.value ? Math.floor(length / batch) : Math.ceil(length / batch);
}

/** Whether the list `name` is concatenated after `loop` in the same function (`torch.cat(kept)`). */
function concatenatedAfter(loop: PyNode, name: string): boolean {
  const scope = enclosingScope(loop);
  return scope.descendantsOfType('call').some((call) => {
    if (!call || call.startIndex < loop.endIndex) return false;
    if (!CONCATENATION.test(call.childForFieldName('function')?.text ?? '')) return false;
    const first = call.childForFieldName('arguments')?.namedChildren[0];
    return first?.type === 'identifier' && first.text === name;
  });
}

/** The list a statement grows in a loop: `kept.append(x)` or `kept += [x]`, with the kept expression. */
function grownList(statement: PyNode): { list: string; kept: PyNode; at: PyNode } | undefined {
  const expression = statement.type === 'expression_statement' ? statement.namedChildren[0] : undefined;
  if (expression?.type === 'call') {
    const fn = expression.childForFieldName('function');
    const list = fn?.type === 'attribute' ? fn.childForFieldName('object') : undefined;
    const kept = expression.childForFieldName('arguments')?.namedChildren[0];
    if (list?.type === 'identifier' && fn?.childForFieldName('attribute')?.text === 'append' && kept) return { list: list.text, kept, at: expression };
  }
  if (expression?.type === 'augmented_assignment' && expression.children.some((child) => child?.text === '+=')) {
    const list = expression.childForFieldName('left');
    const right = expression.childForFieldName('right');
    const kept = right?.type === 'list' && right.namedChildren.length === 1 ? right.namedChildren[0] : undefined;
    if (list?.type === 'identifier' && kept) return { list: list.text, kept, at: expression };
  }
  return undefined;
}

/** Whether `name` is bound anew inside the loop's body (then it does not carry batches over). */
function reboundIn(body: PyNode, name: string): boolean {
  return body.descendantsOfType('assignment').some((assignment) => assignment?.childForFieldName('left')?.text === name);
}

/**
 * The places batch loops keep a model output per batch without a graph (under no_grad or detached; with a graph,
 * OOM101/OOM104 report it). `modelLine` is the 0-based line the detected model is built on: a call is the
 * model's forward where its callee holds the value built there.
 */
export function keptOutputSites(program: ProgramModel, root: PyNode, modelLine: number): KeptOutputSite[] {
  const sites: KeptOutputSite[] = [];
  const isModel = (callee: PyNode): boolean => {
    if (callee.type !== 'identifier') return false;
    const value = nameValueOf(program, callee);
    return value !== undefined && 'line' in value && value.line === modelLine;
  };
  for (const loop of treeIndex(root).forLoops) {
    const body = loop?.childForFieldName('body');
    if (!loop || !body) continue;
    const { value: loader } = loopLoader(program, loop);
    if (loader?.kind !== 'call' || !/(^|\.)DataLoader$/.test(loader.path)) continue;
    for (const statement of body.descendantsOfType('expression_statement')) {
      const grown = statement && grownList(statement);
      if (!grown || reboundIn(body, grown.list)) continue;
      const chain = chainToForward(grown.kept, body, isModel);
      if (!chain || !(chain.detached || underNoGrad(grown.at) || underNoGrad(chain.forward))) continue;
      const atBreak = batchesAtBreak(program, loop, body);
      const ofData = loaderBatches(program, loop);
      const batches = atBreak !== undefined && ofData !== undefined ? Math.min(atBreak, ofData) : atBreak ?? ofData;
      const batchSize = loopBatchSize(program, loop);
      sites.push({
        line: grown.at.startPosition.row,
        ...(batchSize !== undefined ? { batchSize } : {}),
        ...(batches !== undefined ? { batches } : {}),
        concatenated: concatenatedAfter(loop, grown.list),
      });
    }
  }
  return sites;
}
