// What the step's own code keeps of what a model returns, beside the tensors forward saved. Two readings, both of
// the statements around the model's calls in the step:
// - A loss over returned feature lists: a GAN critic that hands back its intermediate feature maps for a
//   feature-matching loss (`torch.mean(torch.abs(real - fake))` over every map, as HiFi-GAN, MelGAN and pix2pixHD
//   train), deep supervision's side outputs, a perceptual loss's list of features. Each element-wise op there that
//   backward reads keeps a map-sized tensor (abs keeps its input, the difference), alive beside the forwards'
//   tensors when backward starts. Read by running the statements that follow the call, up to the step's backward,
//   in the program model with the forward trace's tensors bound to the names the call's result is unpacked into.
//   Only names holding lists of tensors are bound, and none holding what the step's loss terms count already as the
//   output the loss reads (a tuple's first element, a list returned whole: see module-tree's outputOf).
// - Outputs an earlier call's names still hold: `scores, _, _ = critic(real, fake.detach())` in the critic's update
//   keeps the feature maps bound to `_` after its backward has freed the graph, until a name is bound again; the
//   generator's update that follows runs its forwards and backward beside them.
// The loss's backward runs first (its nodes are the step's last), so the gradients of every tensor it read are made
// at once and wait in autograd's buffers until backward reaches the layers that made them, while what the loss kept
// is freed: a peak of their sum over what forward kept, early in backward.
// Measured on the H200 with a GAN step of our own models (test/gpu/estimator/results/probe_hifi11.json): the
// generator update's backward peaked one set of feature maps (73 MiB at batch 16, 146 at 32) over what it kept.
import type { ProgramModel } from '../engine/program/interpreter';
import type { PyNode } from '../engine/program/node';
import type { TensorValue, Value } from '../engine/program/values';
import type { ForwardTrace } from './forward-trace';

const UNPACKING = new Set(['pattern_list', 'tuple_pattern', 'list_pattern']);
const UNBOUND: Value = { kind: 'none' };
/** Layers a loss is written with: losses and activations, which hold no weights. */
const LOSS_OR_ACTIVATION_LAYER = /Loss$|^(Softmax|LogSoftmax|Sigmoid|LogSigmoid|Tanh|ReLU|Softplus)$/;

/**
 * Records in `trace` (stepKeptElements) what the step's code after one of the model's calls keeps of what
 * `returned` holds: the call where it keeps most (a GAN's generator update reads the feature maps; its critic update
 * only scores); and (stepLossGradientElements) what its loss's backward makes over that.
 */
export function keepStepReturnedOutputs(program: ProgramModel, calls: readonly PyNode[], returned: Value | undefined, trace: ForwardTrace): void {
  if (returned?.kind !== 'list' && returned?.kind !== 'dict') return;
  const modelCalls = new Set([...program.moduleCallNodes.values()].flat().map((node) => node.id));
  const counted = new Set(outputTensors(returned).map((t) => t.id));
  let [most, fp32, gradients] = [0, 0, 0];
  for (const call of calls) {
    const statement = statementOf(call);
    if (!statement) continue;
    const earlier = calls.filter((other) => other.startIndex < call.startIndex && statementOf(other)?.parent?.id === statement.parent?.id);
    // The names earlier calls in the same block bound stay bound (`real_maps = D(real)` before `fake_maps = D(fake)`).
    const names = new Map<string, Value>();
    for (const other of [...earlier, call]) {
      for (const [name, value] of boundNames(other, returned, false)) {
        if (!tensorsOf(value).every((t) => counted.has(t.id))) names.set(name, value);
      }
    }
    const expressions = names.size > 0 ? lossExpressions(statement, names, modelCalls) : [];
    const kept = expressions.length > 0 ? trace.keptApart(() => {
      for (const node of expressions) program.evaluateTraced(node, names, trace);
    }) : new Map<number, number>();
    const lossElements = [...kept.values()].reduce((sum, n) => sum + n, 0);
    const keptHere = lossElements + heldByEarlierCalls(statement, earlier, returned);
    if (keptHere <= most) continue;
    most = keptHere;
    fp32 = trace.fullPrecisionElements(kept);
    // Each name the loss reads holds one forward's tensors (two names of one traced call are two calls).
    const read = [...names].filter(([name]) => expressions.some((node) => readsAny(node, new Map([[name, UNBOUND]]))));
    const readElements = read.reduce((sum, [, value]) => sum + elementsOf(tensorsOf(value)), 0);
    gradients = Math.max(0, readElements - lossElements);
  }
  trace.stepKeptElements = most;
  trace.stepKeptFp32Elements = fp32;
  trace.stepLossGradientElements = gradients;
}

/**
 * A loss the step writes by hand over the one tensor forward returns (a soft Dice over a segmentation's logits: their
 * softmax, a one-hot of the labels, products over the whole volume): what its ops keep for backward, recorded in
 * `trace` as stepKeptElements, as keepStepReturnedOutputs does for feature lists. Read by running the statements after
 * the call, up to the step's backward, with the traced output bound to the name it is assigned to, the step's other
 * tensors (labels drawn or made with a batch axis) given by `stepTensor` at the traced batch, and its other names at
 * the values the script's run gave them. cross_entropy keeps nothing in the trace (the model's loss terms size its
 * log-softmax from the output), so a plain loss adds nothing here.
 */
export function keepStepLossOverOutput(program: ProgramModel, calls: readonly PyNode[], returned: Value | undefined, trace: ForwardTrace,
  stepTensor: (made: Value) => TensorValue | undefined, following?: ReadonlyMap<string, Value>): void {
  if (returned?.kind !== 'tensor' || returned.integer) return;
  const modelCalls = new Set([...program.moduleCallNodes.values(), ...[...program.moduleMethodCalls.values()].map((calls) => calls.map((c) => c.node))]
    .flat().map((node) => node.id));
  let [most, fp32, withCrossEntropy] = [0, 0, false];
  let extra = { elements: 0, fp32: 0 };
  for (const call of calls) {
    const statement = statementOf(call);
    const left = call.parent?.childForFieldName('left');
    if (!statement || left?.type !== 'identifier') continue;
    // What the step's later calls of the model's methods returned (`logits = model.score(h, triples)`) is bound too.
    const names = new Map<string, Value>([...(following ?? []), [left.text, returned]]);
    // An expression that runs a module (another model's forward: a GAN's critic on the generator's output) is
    // traced with that model, not as this one's loss.
    const expressions = lossExpressions(statement, names, modelCalls).filter((node) => !runsModule(program, node));
    if (expressions.length === 0) continue;
    for (const node of expressions) bindReadNames(program, node, names, stepTensor);
    const crossEntropies = trace.crossEntropyCalls;
    // What the loss's input is cast to stays as the model's loss terms read it from forward.
    const lossInputFp32 = { ...trace.lossInputFp32 };
    const kept = trace.keptApart(() => {
      for (const node of expressions) program.evaluateTraced(node, names, trace);
    });
    trace.lossInputFp32 = lossInputFp32;
    const elements = [...kept.values()].reduce((sum, n) => sum + n, 0);
    if (elements <= most) continue;
    most = elements;
    fp32 = trace.fullPrecisionElements(kept);
    withCrossEntropy = trace.crossEntropyCalls > crossEntropies || expressions.some((node) => callsCrossEntropyLayer(program, node));
    const graded = trace.withHistory(kept);
    extra = { elements: [...graded.values()].reduce((sum, n) => sum + n, 0), fp32: trace.fullPrecisionElements(graded) };
  }
  if (most === 0) return;
  trace.stepKeptElements = most;
  trace.stepKeptFp32Elements = fp32;
  trace.stepLossInPlaceOfOutputLoss = !withCrossEntropy;
  // Measured on the H200 (probe_hnn13): a soft Dice beside cross-entropy over 3-D logits peaks at backward's start
  // 4 x the fp32 logits over what is kept, cross-entropy alone 2 x: the softmax's gradient and its input's.
  if (withCrossEntropy) trace.stepLossExtraGradients = { elements: 2 * extra.elements, fp32: 2 * extra.fp32 };
}

/** Whether an expression calls a cross-entropy loss module (`criterion = nn.CrossEntropyLoss()`). */
function callsCrossEntropyLayer(program: ProgramModel, node: PyNode): boolean {
  return [node, ...node.descendantsOfType('call')].some((call) => {
    const value = call?.type === 'call' ? program.valueOf(call.childForFieldName('function')) : undefined;
    return value?.kind === 'layer' && /^(CrossEntropyLoss|NLLLoss)$/.test(value.type);
  });
}

/** Whether an expression calls a module of the script's or a layer with weights (not a loss or an activation). */
function runsModule(program: ProgramModel, node: PyNode): boolean {
  return [node, ...node.descendantsOfType('call')].some((call) => {
    if (call?.type !== 'call') return false;
    const value = program.valueOf(call.childForFieldName('function'));
    return value?.kind === 'object' || (value?.kind === 'layer' && !LOSS_OR_ACTIVATION_LAYER.test(value.type));
  });
}

/**
 * Binds the names an expression of the step reads, other than those bound already, to what they held when the
 * script ran it: a tensor the step made (labels from torch.randint) as `stepTensor` gives it at the traced batch, any
 * other value as it was (a config dict, a class count). Module-level names are read from the program's globals.
 */
function bindReadNames(program: ProgramModel, node: PyNode, names: Map<string, Value>, stepTensor: (made: Value) => TensorValue | undefined): void {
  for (const identifier of node.descendantsOfType('identifier')) {
    if (!identifier || names.has(identifier.text)) continue;
    const parent = identifier.parent;
    // An attribute's name or a keyword's name is not a read of a variable.
    if (parent?.type === 'attribute' && parent.childForFieldName('attribute')?.id === identifier.id) continue;
    if (parent?.type === 'keyword_argument' && parent.childForFieldName('name')?.id === identifier.id) continue;
    const value = program.valueOf(identifier);
    if (!value || value.kind === 'unknown') continue;
    const tensor = value.kind === 'call' ? stepTensor(value) : undefined;
    if (value.kind === 'call' && !tensor) continue;
    names.set(identifier.text, tensor ?? value);
  }
}

/** The statement `targets = model(...)` a call is the right side of. */
function statementOf(call: PyNode): PyNode | undefined {
  const assignment = call.parent;
  if (assignment?.type !== 'assignment' || assignment.childForFieldName('right')?.id !== call.id) return undefined;
  return assignment.parent?.type === 'expression_statement' ? assignment.parent : undefined;
}

/** Whether a value is a list or dict (or nested ones) holding tensors. */
function holdsTensors(value: Value): boolean {
  if (value.kind === 'tensor') return true;
  return (value.kind === 'list' || value.kind === 'dict') && itemsOf(value).some(holdsTensors);
}

/** The items of a list, the values of a dict (a detector's heads by name). */
function itemsOf(value: Value): Value[] {
  return value.kind === 'list' ? value.items : value.kind === 'dict' ? [...value.entries.values()] : [];
}

/**
 * The names `score, feats = model(...)` (or `(r, fr), (g, fg) = model(a, b)`) binds, with their values: lists of
 * tensors only, or (`all`) every value holding tensors, `_` included. A list returned whole (`feats = vgg(x)`)
 * binds its name.
 */
function boundNames(call: PyNode, returned: Value & { kind: 'list' | 'dict' }, all: boolean): Map<string, Value> {
  const names = new Map<string, Value>();
  const left = call.parent?.childForFieldName('left');
  const tuple = returned.kind === 'list' && returned.tuple;
  if (left?.type === 'identifier' && (all || !tuple) && holdsTensors(returned)) names.set(left.text, returned);
  else if (left) unpack(left, returned, names, all);
  return names;
}

/** Binds the names of an unpacking target to the values at their places in `value` (see boundNames). */
function unpack(target: PyNode, value: Value, names: Map<string, Value>, all: boolean): void {
  if (target.type === 'identifier') {
    const bound = all ? holdsTensors(value) : target.text !== '_' && value.kind === 'list' && holdsTensors(value);
    if (bound) names.set(target.text, value);
    return;
  }
  if (!UNPACKING.has(target.type) || value.kind !== 'list') return;
  const targets = target.namedChildren.filter((n): n is PyNode => !!n);
  if (targets.length !== value.items.length) return;
  targets.forEach((inner, i) => unpack(inner, value.items[i]!, names, all));
}

/**
 * The statements of the block after `statement`, up to and with the first that calls backward; past the end of a
 * `with` block (the forward under autocast, the loss after it), those after the `with` statement too.
 */
function statementsUpToBackward(statement: PyNode): PyNode[] {
  const found: PyNode[] = [];
  for (let at: PyNode | null = statement; at; at = enclosingWith(at)) {
    for (const next of at.parent?.namedChildren ?? []) {
      if (!next || next.startIndex <= at.startIndex) continue;
      found.push(next);
      if (callsBackward(next)) return found;
    }
  }
  return found;
}

/** The `with` statement whose block holds `statement`, if any. */
function enclosingWith(statement: PyNode): PyNode | null {
  const block = statement.parent;
  return block?.type === 'block' && block.parent?.type === 'with_statement' ? block.parent : null;
}

/**
 * The expressions after the call's statement, up to the step's backward, that read one of `names`: the right side
 * of an assignment, or a statement's expression. One that calls a model is left out (its forward is traced on its own).
 */
function lossExpressions(statement: PyNode, names: ReadonlyMap<string, Value>, modelCalls: ReadonlySet<number>): PyNode[] {
  const found: PyNode[] = [];
  for (const next of statementsUpToBackward(statement)) {
    if (next.type !== 'expression_statement') continue;
    const inner = next.namedChildren[0];
    const expression = inner && (inner.type === 'assignment' || inner.type === 'augmented_assignment') ? inner.childForFieldName('right') : inner;
    if (expression && readsAny(expression, names) && !callsModel(expression, modelCalls)) found.push(expression);
  }
  return found;
}

/**
 * Elements of the tensors earlier calls' names still hold when the backward after `statement` runs: calls whose
 * graph a backward between them and this one freed (else their forward is counted with this one's), through names
 * no statement binds again before that backward.
 */
function heldByEarlierCalls(statement: PyNode, earlier: readonly PyNode[], returned: Value & { kind: 'list' | 'dict' }): number {
  const held = new Map<number, number>();
  const untilBackward = statementsUpToBackward(statement);
  for (const call of earlier) {
    const own = statementOf(call)!;
    const between = (statement.parent?.namedChildren ?? []).filter((s): s is PyNode => !!s && s.startIndex > own.startIndex && s.startIndex < statement.startIndex);
    if (!between.some(callsBackward)) continue;
    const later = [...between, statement, ...untilBackward];
    for (const [name, value] of boundNames(call, returned, true)) {
      if (later.some((s) => binds(s, name))) continue;
      for (const tensor of tensorsOf(value)) held.set(tensor.id, elementsOf([tensor]));
    }
  }
  return [...held.values()].reduce((sum, n) => sum + n, 0);
}

/**
 * The tensors of what forward returned that the step's loss terms count as the output the loss reads, as
 * module-tree's outputOf picks them: a tuple's first element (unless a scalar), every item of a list.
 */
function outputTensors(value: Value): TensorValue[] {
  if (value.kind === 'tensor') return [value];
  if (value.kind !== 'list') return [];
  if (!value.tuple) return value.items.flatMap(outputTensors);
  const sizes = value.items.map((item) => tensorsOf(item).reduce((sum, t) => sum + t.shape.reduce((a, d) => a * d, 1), 0));
  if (sizes[0]! > 1) return outputTensors(value.items[0]!);
  const largest = sizes.indexOf(Math.max(...sizes));
  return largest >= 0 ? outputTensors(value.items[largest]!) : [];
}

/** Elements of distinct tensors. */
function elementsOf(tensors: readonly TensorValue[]): number {
  const distinct = new Map(tensors.map((t) => [t.id, t.shape.reduce((a, d) => a * d, 1)] as const));
  return [...distinct.values()].reduce((sum, n) => sum + n, 0);
}

function tensorsOf(value: Value): TensorValue[] {
  if (value.kind === 'tensor') return value.integer ? [] : [value];
  return itemsOf(value).flatMap(tensorsOf);
}

/** Whether a statement binds `name` (an assignment's target, plain or unpacked). */
function binds(statement: PyNode, name: string): boolean {
  return statement.descendantsOfType('assignment').some((assignment) => {
    const left = assignment?.childForFieldName('left');
    if (!left) return false;
    return left.type === 'identifier' ? left.text === name : left.descendantsOfType('identifier').some((id) => id?.text === name);
  });
}

function readsAny(node: PyNode, names: ReadonlyMap<string, Value>): boolean {
  return node.descendantsOfType('identifier').some((identifier) => !!identifier && names.has(identifier.text));
}

function callsModel(node: PyNode, modelCalls: ReadonlySet<number>): boolean {
  return node.descendantsOfType('call').some((call) => !!call && modelCalls.has(call.id));
}

function callsBackward(node: PyNode): boolean {
  return node.descendantsOfType('call').some((call) => /(^|\.)backward$/.test(call?.childForFieldName('function')?.text.replace(/\s+/g, '') ?? ''));
}
