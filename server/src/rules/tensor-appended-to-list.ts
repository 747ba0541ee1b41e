// OOM101: a graph-attached tensor kept in a list or dict that outlives the loop iteration.
import type { Node } from '../engine/parser';
import { containerBase, isClearedAfterBackward, iterationLoop, outlivesIteration } from '../engine/semantic/lifetime';
import type { SemanticModel } from '../engine/semantic/model';
import { callArguments, calleeName, callReceiver, children, dottedName, enclosingFunction, enclosingLoops, nameWords, rangeOf } from '../engine/syntax';
import { asReceiver, replaceNode } from '../fixes/edits';
import type { Fix, KeptMemory } from '../engine/types';
import { t } from '../l10n';
import { ruleCode } from './codes';
import type { Rule, RuleReport } from './rule';

const STORING_METHODS = new Set(['append', 'extend', 'insert', 'appendleft']);

/** The stored value of `xs.append(v)`, `xs.insert(i, v)`, `xs.extend([a, b])`. */
function storedValue(call: Node): Node | undefined {
  const { positional } = callArguments(call);
  return calleeName(call) === 'insert' ? positional[1] : positional[0];
}

/** Whether the kept value is a scalar loss (small on the GPU once backward has freed its graph). */
export function isScalarLoss(model: SemanticModel, value: Node): boolean {
  // `loss / len(loader)`, `(loss * x.size(0))`: a scalar loss scaled by numbers is still one.
  if (value.type === 'parenthesized_expression') return !!value.namedChildren[0] && isScalarLoss(model, value.namedChildren[0]);
  if (value.type === 'binary_operator') {
    const operands = [value.childForFieldName('left'), value.childForFieldName('right')].filter((node): node is Node => !!node);
    return operands.some((operand) => isScalarLoss(model, operand)) && !operands.some((operand) => isModelOutput(model, operand));
  }
  // `losses["seg"]`: an element of a container of losses.
  if (value.type === 'subscript' && value.childForFieldName('value')) return isScalarLoss(model, value.childForFieldName('value')!);
  const name = dottedName(value) ?? (value.type === 'call' ? dottedName(value.childForFieldName('function')) : undefined);
  if (!name) return false;
  return nameWords(name).some((word) => /^(loss|losses|nll|elbo|kld|kl|mse|bce|ce)$/.test(word)) || model.isLossFunctionRef(value.type === 'call' ? value.childForFieldName('function') : value);
}

/** How a message names an expression: its text, cut to 40 characters. */
function shortText(text: string): string {
  // A call spread over several lines reads as one line in a message.
  const line = text.replace(/\s*\n\s*/g, ' ');
  return line.length <= 40 ? line : `${line.slice(0, 37)}...`;
}

/** Words of names that hold a model's output rather than a number: logits, features, predictions. */
const OUTPUT_WORDS = /^(logits|outputs?|out|preds?|predictions|scores|probs|probabilities|embeddings?|emb|features?|feats?|hidden|hiddens|activations?|attentions?|recon|reconstruction)$/;
const CLASS_SCORE_WORDS = /^(logits|scores|probs|probabilities)$/;
const SHAPE_KEEPING_METHODS = new Set([
  'cpu', 'cuda', 'to', 'clone', 'float', 'half', 'double', 'bfloat16', 'contiguous', 'sigmoid', 'softmax', 'log_softmax',
  'exp', 'squeeze', 'unsqueeze', 'view', 'reshape', 'flatten', 'permute', 'transpose',
]);

/** The last name of an output, through shape-keeping methods: `logits` for `logits.float().cpu()`. */
function outputName(value: Node): string {
  let current = value;
  while (current.type === 'call' && SHAPE_KEEPING_METHODS.has(calleeName(current) ?? '') && callReceiver(current)) current = callReceiver(current)!;
  return (dottedName(current) ?? '').split('.').pop() ?? '';
}

/** `logits.detach().cpu()` for `logits` and for `logits.cpu()` (a copy on the CPU that still holds the graph). */
/** What `.detach().cpu()` goes after: the value, or the receiver of its own `.cpu()`. */
function offGpuReceiver(value: Node): Node {
  const receiver = value.type === 'call' && calleeName(value) === 'cpu' && callArguments(value).positional.length === 0 ? callReceiver(value) : undefined;
  return receiver ?? value;
}

export function offGpuForm(value: Node): string {
  return `${asReceiver(offGpuReceiver(value))}.detach().cpu()`;
}

/**
 * Whether a kept value is a model output (a forward's result, `logits`, `outputs.last_hidden_state`): a tensor with a
 * row per example, never a one-element tensor that `.item()` could turn into a number.
 */
export function isModelOutput(model: SemanticModel, value: Node): boolean {
  if (value.type === 'call' && model.isDirectForwardCall(value)) return true;
  // `logits.cpu()`, `out.float().sigmoid()`: a method that keeps one value per element keeps an output an output.
  const method = value.type === 'call' ? calleeName(value) : undefined;
  const receiver = value.type === 'call' ? callReceiver(value) : undefined;
  if (method && receiver && SHAPE_KEEPING_METHODS.has(method)) return isModelOutput(model, receiver);
  const name = dottedName(value) ?? '';
  return nameWords(name.split('.').pop() ?? '').some((word) => OUTPUT_WORDS.test(word));
}


/**
 * A value that a finding's site keeps, and what its message, fixes and size ask of it, each answered once when
 * first asked: a long loop has a finding per line, and all three ask whether the value is a scalar loss.
 */
export class KeptValue {
  /** The value as the receiver of a method call (`(a + b)` for `a + b`). */
  readonly receiver: string;
  private scalarLoss: boolean | undefined;
  private modelOutput: boolean | undefined;
  private tensorLater: boolean | undefined;

  /** `site` keeps `node` in `keptIn` (the container or total); without them, no use as a tensor later is known. */
  constructor(readonly model: SemanticModel, readonly node: Node, readonly site?: Node, readonly keptIn?: Node) {
    this.receiver = asReceiver(node);
  }

  get isScalarLoss(): boolean {
    return (this.scalarLoss ??= isScalarLoss(this.model, this.node));
  }

  get isModelOutput(): boolean {
    return (this.modelOutput ??= isModelOutput(this.model, this.node));
  }

  /** Whether the container or total is used as a tensor later in the function (neededAsTensorLater). */
  get neededAsTensorLater(): boolean {
    return (this.tensorLater ??= !!this.site && !!this.keptIn && neededAsTensorLater(this.model, this.site, this.keptIn));
  }
}

/** Whether backward frees the graph of each iteration around `site`: its batch loop runs backward, or it is Lightning's training_step. */
export function freedByBackward(model: SemanticModel, site: Node): boolean {
  const loop = iterationLoop(model, site);
  return loop ? model.runsBackward(loop) : model.functionOf(site)?.name === 'training_step';
}

/** What to keep instead, by what the value is: a scalar loss, a model output, or a tensor of unknown size. */
export function keepInsteadAdvice(kept: KeptValue, verb: 'Append' | 'Store' | 'Add'): string {
  const value = kept.node;
  const receiver = shortText(kept.receiver);
  // Each verb's message is formatted alone, in a switch: a long loop has a finding per line, and an object of a
  // closure per verb, made for every finding, took a tenth of the rule's time on 10,000 appends.
  if (kept.isScalarLoss) {
    switch (verb) {
      case 'Append': return t('Append {0}.item() (or {0}.detach()).', receiver);
      case 'Store': return t('Store {0}.item() (or {0}.detach()).', receiver);
      case 'Add': return t('Add {0}.item() (or {0}.detach()) instead.', receiver);
    }
  }
  if (kept.isModelOutput) {
    // The suffix stays whole when a long expression is shortened.
    const off = `${shortText(asReceiver(offGpuReceiver(value)))}.detach().cpu()`;
    // `.item()` fails on a tensor with more than one element; a model output has one row per example.
    if (nameWords(outputName(value)).some((word) => CLASS_SCORE_WORDS.test(word))) {
      switch (verb) {
        case 'Append': return t('Append {0} to keep it off the GPU (or {1}.argmax(-1) when only the predicted class is needed).', off, receiver);
        case 'Store': return t('Store {0} to keep it off the GPU (or {1}.argmax(-1) when only the predicted class is needed).', off, receiver);
        case 'Add': return t('Add {0}.detach() instead.', receiver);
      }
    }
    switch (verb) {
      case 'Append': return t('Append {0} to keep it off the GPU (or {1}.detach() to keep it there).', off, receiver);
      case 'Store': return t('Store {0} to keep it off the GPU (or {1}.detach() to keep it there).', off, receiver);
      case 'Add': return t('Add {0}.detach() instead.', receiver);
    }
  }
  switch (verb) {
    case 'Append': return t('Append {0}.detach() (or {0}.item() if it holds a single number).', receiver);
    case 'Store': return t('Store {0}.detach() (or {0}.item() if it holds a single number).', receiver);
    case 'Add': return t('Add {0}.detach() (or {0}.item() if it holds a single number) instead.', receiver);
  }
}

/** Whether every key of a subscript store is a literal (`d["loss"]`, `stats[0]["acc"]`): the same slot each time. */
function constantKeys(target: Node): boolean {
  let node: Node | null = target;
  while (node?.type === 'subscript') {
    const key = node.childForFieldName('subscript');
    const literal = key?.type === 'integer' || (key?.type === 'string' && key.descendantsOfType('interpolation').length === 0)
      || (key?.type === 'unary_operator' && key.namedChildren[0]?.type === 'integer');
    if (!literal) return false;
    node = node.childForFieldName('value');
  }
  return true;
}

/** The message of a kept value; `freed`: whether backward frees each iteration's graph (freedByBackward). */
export function keptValueMessage(kept: KeptValue, freed: boolean, verb: 'appended' | 'stored'): string {
  const text = shortText(kept.node.text);
  const advice = keepInsteadAdvice(kept, verb === 'appended' ? 'Append' : 'Store');
  if (freed && kept.isScalarLoss) {
    return verb === 'appended'
      ? t("'{0}' is appended with its autograd graph; each step keeps a small GPU tensor and its graph nodes in host memory, unbounded over the run. {1}", text, advice)
      : t("'{0}' is stored with its autograd graph; each step keeps a small GPU tensor and its graph nodes in host memory, unbounded over the run. {1}", text, advice);
  }
  return verb === 'appended'
    ? t("'{0}' is appended with its autograd graph; every iteration's graph, activations included, stays in GPU memory until the list is freed. {1}", text, advice)
    : t("'{0}' is stored with its autograd graph; every iteration's graph, activations included, stays in GPU memory until the container is freed. {1}", text, advice);
}

/**
 * What one kept value holds per batch, where its size can be told: in a loop without backward, the forward's whole
 * graph and saved activations; in a training loop backward frees those, and a model output (logits) keeps itself.
 */
export function keptMemory(kept: KeptValue, freed: boolean): KeptMemory | undefined {
  if (!freed) return 'graph';
  if (kept.isScalarLoss) return undefined;
  const part = kept.site ? unpackedOutputIndex(kept.model, kept.site, kept.node) : undefined;
  if (part !== undefined) return `output[${part}]`;
  return kept.isModelOutput ? 'output' : undefined;
}

/** How far forwardsKept follows names back to the expressions that made them. */
const MAX_DEFINITION_DEPTH = 4;

/**
 * The model's forward passes whose graphs a kept value carries, counted where it has more than one: `(p + p_flip) / 2`
 * of two softmaxed forwards (test-time augmentation) keeps both graphs and their saved activations. Names are
 * followed to the one definition that reaches them; undefined where a single forward, none, or an unknown count.
 */
export function forwardsKept(model: SemanticModel, value: Node): number | undefined {
  const forwards = new Set<number>();
  const visit = (node: Node, depth: number): void => {
    if (node.type === 'call' && model.isDirectForwardCall(node)) {
      forwards.add(node.id);
      return;
    }
    if (node.type === 'identifier') {
      const reaching = depth < MAX_DEFINITION_DEPTH ? model.reachingDefinitions(node.text, node) : [];
      if (reaching.length === 1 && reaching[0]!.kind === 'assign' && reaching[0]!.index === undefined && reaching[0]!.value) visit(reaching[0]!.value, depth + 1);
      return;
    }
    // A lambda or a nested function's body runs elsewhere; any other expression combines its parts.
    if (node.type === 'lambda') return;
    for (const child of node.namedChildren) if (child) visit(child, depth);
  };
  visit(value, 0);
  return forwards.size > 1 ? forwards.size : undefined;
}

/** The position of a name unpacked from a forward's returned tuple (`logits, attn = model(x)`: attn is 1). */
function unpackedOutputIndex(model: SemanticModel, site: Node, value: Node): number | undefined {
  if (value.type !== 'identifier') return undefined;
  const reaching = model.reachingDefinitions(value.text, site);
  if (reaching.length !== 1) return undefined;
  const { value: assigned, index, kind } = reaching[0]!;
  return kind === 'assign' && index !== undefined && assigned?.type === 'call' && model.isDirectForwardCall(assigned) ? index : undefined;
}

const TENSOR_COMBINERS = new Set(['stack', 'cat', 'concat', 'concatenate', 'vstack', 'hstack', 'dstack', 'column_stack']);

/**
 * Whether what `site` keeps in `keptIn` is used as a tensor later in the same function: the container is handed to
 * `torch.stack`/`torch.cat`, or a method is called on it or on one of its elements (`total.cpu()`, `losses[-1].item()`).
 * A Python float from `.item()` would break that code, so `.detach()` is the fix there.
 */
export function neededAsTensorLater(model: SemanticModel, site: Node, keptIn: Node): boolean {
  const list = isListContainer(site);
  // `d[k] = loss` keeps it in `d`; `xs.append(loss)` in `xs`; `total += loss` in `total` itself.
  const container = list && keptIn.type === 'subscript' && site.type !== 'call' ? keptIn.childForFieldName('value') ?? keptIn : keptIn;
  const uses = tensorUsesIn(model, enclosingFunction(site));
  const last = list
    ? Math.max(uses.combined.get(container.text) ?? -1, uses.elementMethods.get(container.text) ?? -1)
    : uses.methods.get(container.text) ?? -1;
  return last >= site.endIndex;
}

/** Per function: where each name is last used as a tensor (one pass over its calls, shared by every kept value). */
interface TensorUses {
  /** Handed to torch.stack/cat/...: the last call's start. */
  combined: Map<string, number>;
  /** A method called on one of its elements (`losses[-1].item()`). */
  elementMethods: Map<string, number>;
  /** A method called on it (`total.cpu()`). */
  methods: Map<string, number>;
}

const usesMemo = new WeakMap<SemanticModel, Map<number, TensorUses>>();

function tensorUsesIn(model: SemanticModel, scope: Node): TensorUses {
  let byScope = usesMemo.get(model);
  if (!byScope) usesMemo.set(model, (byScope = new Map()));
  let uses = byScope.get(scope.id);
  if (uses) return uses;
  // One pass over the calls of the scope (a function's lie within its range; the module's are anywhere).
  uses = { combined: new Map(), elementMethods: new Map(), methods: new Map() };
  byScope.set(scope.id, uses);
  const note = (map: Map<string, number>, name: string, at: number) => map.set(name, Math.max(map.get(name) ?? -1, at));
  for (const call of model.nodesWithin('calls', scope)) {
    if (enclosingFunction(call).id !== scope.id) continue;
    const fn = call.childForFieldName('function');
    if (TENSOR_COMBINERS.has(calleeName(call) ?? '') && /^torch\./.test(model.qualify(fn) ?? '')) {
      for (const arg of callArguments(call).positional) note(uses.combined, arg.text, call.startIndex);
    }
    const receiver = callReceiver(call);
    if (!receiver) continue;
    // A list's own methods (`losses.append`) say nothing; a method on one of its elements, or on a total, does.
    if (receiver.type === 'subscript') {
      const value = receiver.childForFieldName('value');
      if (value) note(uses.elementMethods, value.text, call.startIndex);
    }
    note(uses.methods, receiver.text, call.startIndex);
  }
  return uses;
}

/** Whether `site` keeps its value in a list or dict (append, `+= [x]`, `d[k] = x`) rather than in a running total. */
function isListContainer(site: Node): boolean {
  if (site.type === 'call') return true;
  const right = site.childForFieldName('right');
  return site.childForFieldName('left')?.type === 'subscript' || right?.type === 'list' || right?.type === 'tuple';
}

/** The titles of the `.detach()` and `.item()` fixes for one verb. */
function fixTitles(verb: 'Append' | 'Store' | 'Add', receiver: string): [detach: string, item: string] {
  switch (verb) {
    case 'Append': return [t('Append {0}.detach()', receiver), t('Append {0}.item()', receiver)];
    case 'Store': return [t('Store {0}.detach()', receiver), t('Store {0}.item()', receiver)];
    case 'Add': return [t('Add {0}.detach()', receiver), t('Add {0}.item()', receiver)];
  }
}

/**
 * `.item()` for a scalar loss (preferred, but it turns the element into a float) and `.detach()` (safe). Where the
 * kept value is used as a tensor later (`keptIn` names the container or total, `site` the statement that keeps it),
 * `.detach()` alone is offered.
 */
export function keepValueFixes(kept: KeptValue, verb: 'Append' | 'Store' | 'Add'): Fix[] {
  const { node: value, receiver } = kept;
  const scalar = kept.isScalarLoss && !kept.neededAsTensorLater;
  const titles = fixTitles(verb, receiver);
  // Both fixes replace the value: its range is read once (edits are never changed in place).
  const range = rangeOf(value);
  const detach: Fix = {
    title: titles[0],
    safe: true,
    preferred: !scalar,
    edits: [{ range, newText: `${receiver}.detach()` }],
  };
  const item: Fix = {
    title: titles[1],
    safe: false,
    preferred: scalar,
    edits: [{ range, newText: `${receiver}.item()` }],
  };
  // `.item()` only works on one-element tensors: offered for a scalar loss alone. A model output can leave the GPU:
  // unsafe, since later code may expect it on the GPU (comparing it with GPU labels, torch.cat with GPU tensors).
  if (scalar) return [item, detach];
  if (verb !== 'Add' && kept.isModelOutput && !kept.neededAsTensorLater) {
    const off = offGpuForm(value);
    const title = verb === 'Append' ? t('Append {0}', off) : t('Store {0}', off);
    return [detach, { title, safe: false, edits: [replaceNode(value, off)] }];
  }
  return [detach];
}

const FORWARD_HOOKS = new Set(['register_forward_hook']);

/**
 * Forward hooks that store the output of the module they are registered on in a container that outlives the call
 * (`feature_maps.append(output)` in a hook of `model.layer1`): every forward appends one more output. The module is
 * the registering call's receiver, named by its path under the model (`layer1`).
 */
function hookStores(model: SemanticModel): Array<{ call: Node; value: Node; container: Node; module: string | undefined; registered: Node }> {
  const found: Array<{ call: Node; value: Node; container: Node; module: string | undefined; registered: Node }> = [];
  for (const method of FORWARD_HOOKS) {
    for (const register of model.callsNamed(method)) {
      const hookName = callArguments(register).positional[0];
      if (hookName?.type !== 'identifier') continue;
      // A handle removed anywhere may be removed every step (features of one batch): not said to pile up.
      const handle = register.parent?.type === 'assignment' ? register.parent.childForFieldName('left')?.text : undefined;
      if (handle && model.callsNamed('remove').some((call) => callReceiver(call)?.text === handle)) continue;
      const receiver = callReceiver(register);
      const path = receiver ? dottedName(receiver) : undefined;
      const module = path?.includes('.') ? path.slice(path.indexOf('.') + 1).replace(/^module\./, '') : undefined;
      for (const fn of model.functions.filter((info) => info.name === hookName.text && !info.classInfo)) {
        const parameters = fn.node.childForFieldName('parameters')?.namedChildren.filter((p): p is Node => !!p) ?? [];
        const output = parameters[2]?.type === 'identifier' ? parameters[2].text : undefined;
        if (!output) continue;
        for (const call of model.callsWithin(fn.node)) {
          if (!STORING_METHODS.has(calleeName(call) ?? '')) continue;
          const container = callReceiver(call);
          const value = storedValue(call);
          if (!container || !value || !storesAttached(value, output)) continue;
          const name = dottedName(containerBase(container));
          // A list made inside the hook, or handed to it, dies with the call or is the caller's to consume.
          if (!name || assignedIn(fn.node, name) || parameters.some((p) => p.text === name)) continue;
          if (isClearedAfterBackward(model, name) || clearedInLoop(model, name)) continue;
          found.push({ call, value, container, module, registered: register });
        }
      }
    }
  }
  return found;
}

/**
 * Whether a loop empties or rebinds the container every iteration (`feats.clear()`, `del feats[:]`, `feats = []`
 * before the forward): the hook's outputs then live one step, as a feature loss reads them.
 */
function clearedInLoop(model: SemanticModel, name: string): boolean {
  const inLoop = (node: Node): boolean => enclosingLoops(node).length > 0;
  if (model.callsNamed('clear').some((call) => callReceiver(call)?.text === name && inLoop(call))) return true;
  if (model.deleteStatements.some((statement) => inLoop(statement) && statement.namedChildren.some((target) =>
    target?.type === 'subscript' && target.childForFieldName('value')?.text === name))) return true;
  return model.assignments.some((assignment) => inLoop(assignment) && [name, `${name}[:]`].includes(assignment.childForFieldName('left')?.text ?? ''));
}

/** Whether a stored value is the hook's output as it is, or through methods that keep its graph on the GPU. */
function storesAttached(value: Node, output: string): boolean {
  let current = value;
  while (current.type === 'call' && callReceiver(current)) {
    const method = calleeName(current) ?? '';
    if (method === 'detach' || method === 'cpu' || method === 'item' || method === 'numpy' || method === 'tolist') return false;
    if (!SHAPE_KEEPING_METHODS.has(method)) return false;
    current = callReceiver(current)!;
  }
  return current.type === 'identifier' && current.text === output;
}

/** Whether `name` is assigned anywhere inside `fn` (a local of the hook). */
function assignedIn(fn: Node, name: string): boolean {
  return fn.descendantsOfType('assignment').some((a) => a?.childForFieldName('left')?.text === name);
}

export const tensorAppendedToList: Rule = {
  ...ruleCode('OOM101'),
  code: 'OOM101',
  check({ model, inRegion, regionNodes }) {
    const reports: RuleReport[] = [];
    const storing = [...STORING_METHODS].flatMap((method) => regionNodes(model.callsNamed(method)));
    for (const call of storing) {
      if (!inRegion(call) || !STORING_METHODS.has(calleeName(call) ?? '')) continue;
      const container = callReceiver(call);
      const value = storedValue(call);
      if (!container || !value) continue;
      if (!model.isAttached(value)) continue;
      // Under no-grad nothing carries a graph (isAttached already knows), but the call itself may be guarded too.
      if (model.isNoGrad(call)) continue;
      if (!outlivesIteration(model, call, container)) continue;
      // `xs.extend([a, b])`: the fix goes on the attached element, never on the list itself.
      const attached = value.type === 'list' || value.type === 'tuple' ? children(value).find((element) => model.isAttached(element)) : value;
      const kept = new KeptValue(model, attached ?? value, call, container);
      const freed = freedByBackward(model, call);
      const keeps = keptMemory(kept, freed);
      const forwards = keeps === 'graph' ? forwardsKept(model, kept.node) : undefined;
      reports.push({
        node: call,
        message: keptValueMessage(kept, freed, 'appended'),
        fixes: attached ? keepValueFixes(kept, 'Append') : [],
        keeps,
        ...(forwards !== undefined ? { keptForwards: forwards } : {}),
      });
    }
    // A forward hook that appends its module's output: one more output per forward, while the hook stays registered.
    for (const { call, value, container, module, registered } of hookStores(model)) {
      if (!inRegion(call) || model.isNoGrad(call)) continue;
      const kept = new KeptValue(model, value, call, container);
      // Training loops free the graph with backward: each output stays, and its size is known where the module is.
      const trained = model.loops.some((loop) => model.runsBackward(loop));
      reports.push({
        node: call,
        message: t("'{0}' is appended by a forward hook registered on {1} (line {2}): every forward keeps that module's output, with its graph until backward, for as long as the hook stays registered. {3}",
          shortText(value.text), shortText(callReceiver(registered)?.text ?? ''), registered.startPosition.row + 1, keepInsteadAdvice(kept, 'Append')),
        fixes: keepValueFixes(kept, 'Append'),
        ...(trained && module ? { keeps: `module:${module}` as const } : {}),
      });
    }
    // `outs += [logits]`
    for (const augmented of regionNodes('augmentedAssignments')) {
      const operator = augmented.childForFieldName('operator')?.text;
      const left = augmented.childForFieldName('left');
      const right = augmented.childForFieldName('right');
      if (!inRegion(augmented) || operator !== '+=' || !left || (right?.type !== 'list' && right?.type !== 'tuple')) continue;
      const element = children(right).find((child) => model.isAttached(child));
      if (!element || model.isNoGrad(augmented)) continue;
      if (!outlivesIteration(model, augmented, left)) continue;
      const kept = new KeptValue(model, element, augmented, left);
      const freed = freedByBackward(model, augmented);
      reports.push({ node: augmented, message: keptValueMessage(kept, freed, 'appended'), fixes: keepValueFixes(kept, 'Append'), keeps: keptMemory(kept, freed) });
    }
    // `history[step] = loss`
    for (const assignment of regionNodes('assignments')) {
      const left = assignment.childForFieldName('left');
      const right = assignment.childForFieldName('right');
      if (!inRegion(assignment) || left?.type !== 'subscript' || !right) continue;
      if (!model.isAttached(right) || model.isNoGrad(assignment)) continue;
      if (!dottedName(containerBase(left))) continue;
      // `logs["loss"] = loss` overwrites one slot every iteration: nothing accumulates.
      if (constantKeys(left)) continue;
      if (!outlivesIteration(model, assignment, left)) continue;
      const kept = new KeptValue(model, right, assignment, left);
      const freed = freedByBackward(model, assignment);
      reports.push({ node: assignment, message: keptValueMessage(kept, freed, 'stored'), fixes: keepValueFixes(kept, 'Store'), keeps: keptMemory(kept, freed) });
    }
    return reports;
  },
};
