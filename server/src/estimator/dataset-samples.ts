// The sample a Dataset's `__getitem__` returns, element by element, as the step's call receives it: `model(x, adj,
// mask)` in `for step, (x, adj, mask, y) in enumerate(loader)` takes the first three elements of the tuple the
// loader's dataset returns, whatever tensor expressions make them (`(torch.rand(n, n) < p).float()`, a product
// with a mask). `__getitem__` is run under a trace that gives its tensors their shapes. A dict sample gives a
// Hugging Face model its inputs by key (`{"input_ids": ..., "labels": ...}`): see sampleFields.
import { lookupClassAttribute, type ProgramModel } from '../engine/program/interpreter';
import type { PyNode } from '../engine/program/node';
import { enclosingLoops, enclosingScope } from '../engine/syntax';
import { treeIndex } from '../engine/program/tree-index';
import { drawnRange, isIntegerTensor, listTensorShape, madeTensorIsInteger, madeTensorShape, partialTensorShape, tensorShape, UNKNOWN, type CallResultValue, type How, type ObjectValue, type Value } from '../engine/program/values';
import { ForwardTrace } from './forward-trace';
import { loopLoader } from './growth';

/** One argument's tensor, for one sample (batch 1), and whether it holds integers. */
export interface SampleShape {
  shape: number[];
  integer: boolean;
  /**
   * Per axis, the least size a random draw gives it (`torch.randint(1, V, (n,))` with `n = random.randint(50,
   * 400)`: 50 on the token axis, whose size is the largest draw); absent where every size is fixed.
   */
  least?: Array<number | undefined>;
}

/** Methods that leave a batch element what it is, shape for shape (`x.to(device)`, `adj.cuda()`, `mask.float()`). */
const CARRIES = /^(to|cuda|float|half|bfloat16|long|int|contiguous|detach)$/;

/** The variable an argument passes on unchanged in shape: `x`, `x.to(dev)`, `x.cuda().float()`. */
function carriedName(node: PyNode): string | undefined {
  let current: PyNode | null = node;
  while (current?.type === 'call') {
    const fn = current.childForFieldName('function');
    if (fn?.type !== 'attribute' || !CARRIES.test(fn.childForFieldName('attribute')?.text ?? '')) return undefined;
    current = fn.childForFieldName('object');
  }
  return current?.type === 'identifier' ? current.text : undefined;
}

/** The names a loop unpacks each batch into, in order (`for i, (x, y) in enumerate(loader)`: x and y). */
function batchNames(loop: PyNode): Array<string | undefined> | undefined {
  let left = loop.childForFieldName('left');
  const right = loop.childForFieldName('right');
  if (right?.type === 'call' && right.childForFieldName('function')?.text === 'enumerate') {
    if ((left?.type !== 'pattern_list' && left?.type !== 'tuple_pattern') || left.namedChildren.length !== 2) return undefined;
    left = left.namedChildren[1] ?? null;
  }
  if (left?.type !== 'pattern_list' && left?.type !== 'tuple_pattern' && left?.type !== 'list_pattern') return undefined;
  return left.namedChildren.map((element) => (element?.type === 'identifier' ? element.text : undefined));
}

/** The one name a loop binds each whole batch to (`for batch in loader`, `for i, batch in enumerate(loader)`). */
function wholeBatchName(loop: PyNode): string | undefined {
  let left = loop.childForFieldName('left');
  const right = loop.childForFieldName('right');
  if (right?.type === 'call' && right.childForFieldName('function')?.text === 'enumerate') {
    if ((left?.type !== 'pattern_list' && left?.type !== 'tuple_pattern') || left.namedChildren.length !== 2) return undefined;
    left = left.namedChildren[1] ?? null;
  }
  return left?.type === 'identifier' ? left.text : undefined;
}

/**
 * The elements of the sample `dataset.__getitem__(0)` returns, traced; undefined where it returns no tuple. The
 * tensors the dataset made beforehand (`self.data = torch.randint(0, V, (n, T + 1))`) are given to the trace with
 * their shapes, so that what `__getitem__` takes of them (`self.data[i, :-1]`) has one.
 */
function traceSample(program: ProgramModel, dataset: ObjectValue): Value | undefined {
  const getitem = dataset.cls ? lookupClassAttribute(dataset.cls, '__getitem__') : undefined;
  if (getitem?.kind !== 'function') return undefined;
  const tracer = new ForwardTrace(new Set());
  const attrs = new Map([...dataset.attrs].map(([name, value]): [string, Value] => {
    // A tensor sized by the script, or made of sized ones (`torch.sin(t) + noise`, an element-wise function of one).
    const made = value.kind === 'call' ? tensorShape(value)?.dims ?? madeTensorShape(value) : undefined;
    return [name, made && value.kind === 'call' ? tracer.input(made, isIntegerTensor(value), drawnRange(value)) : value];
  }));
  return program.trace({ ...getitem, self: { ...dataset, attrs } }, [{ kind: 'number', value: 0 }], tracer);
}

const samples = new WeakMap<ObjectValue, Value | undefined>();

/** The DataLoader a loop iterates, where the program model knows it. */
function loopDataLoader(program: ProgramModel, loop: PyNode): CallResultValue | undefined {
  const { value: loader } = loopLoader(program, loop);
  return loader?.kind === 'call' && /(^|\.)DataLoader$/.test(loader.path) ? loader : undefined;
}

/** The dataset instance the DataLoader a loop iterates holds. */
function loopDataset(program: ProgramModel, loop: PyNode): ObjectValue | undefined {
  const loader = loopDataLoader(program, loop);
  const dataset = loader?.kwargs.get('dataset') ?? loader?.args[0];
  return dataset?.kind === 'object' && dataset.role === 'instance' ? dataset : undefined;
}

/**
 * The sample of a TensorDataset the loop's DataLoader holds: one row of each tensor it was given, where the script
 * sizes them all (`TensorDataset(torch.stack(windows), targets)` of windows cut from a series).
 */
function tensorDatasetSample(program: ProgramModel, loop: PyNode): Value | undefined {
  const loader = loopDataLoader(program, loop);
  const dataset = loader?.kwargs.get('dataset') ?? loader?.args[0];
  if (dataset?.kind !== 'call' || !TENSOR_DATASET.test(dataset.path) || dataset.args.length === 0) return undefined;
  const shapes = dataset.args.map((arg) => (arg.kind === 'call' ? madeTensorShape(arg) : undefined));
  if (shapes.some((shape) => !shape || shape.length === 0)) return undefined;
  const tracer = new ForwardTrace(new Set());
  const items = dataset.args.map((arg, i): Value => tracer.input(shapes[i]!.slice(1), arg.kind === 'call' && madeTensorIsInteger(arg)));
  return { kind: 'list', items, tuple: true };
}

const TENSOR_DATASET = /(^|\.)TensorDataset$/;

/** The sample (traced `__getitem__(0)`) of the dataset the DataLoader a loop iterates holds. */
function loopSample(program: ProgramModel, loop: PyNode): Value | undefined {
  const tensors = tensorDatasetSample(program, loop);
  if (tensors) return tensors;
  const dataset = loopDataset(program, loop);
  return dataset ? datasetSample(program, dataset) : undefined;
}

/** The sample a dataset instance's `__getitem__(0)` returns, traced once per dataset. */
export function datasetSample(program: ProgramModel, dataset: ObjectValue): Value | undefined {
  if (!samples.has(dataset)) samples.set(dataset, traceSample(program, dataset));
  return samples.get(dataset);
}

/**
 * The tensors of a dict sample (`{"input_features": feats, "labels": labels}`) the dataset of the loop's DataLoader
 * returns, by key, with batch 1: a Hugging Face model takes its inputs by those names. Undefined where the sample
 * is not a dict.
 */
export function sampleFields(program: ProgramModel, loop: PyNode): { fields: Map<string, SampleShape>; line: number } | undefined {
  const sample = loopSample(program, loop);
  const cls = sample?.kind === 'dict' ? loopDataset(program, loop)?.cls : undefined;
  const getitem = cls ? lookupClassAttribute(cls, '__getitem__') : undefined;
  if (sample?.kind !== 'dict' || getitem?.kind !== 'function') return undefined;
  const fields = new Map<string, SampleShape>();
  for (const [key, element] of sample.entries) {
    if (element.kind === 'tensor') fields.set(key, { shape: [1, ...element.shape], integer: element.integer });
    // A tensor the trace keeps as the call that made it: with a shape given (`torch.randint(0, V, (C, T))`), or
    // from the lists a dataset built (`torch.tensor([ids for ids in choices])`).
    const made = element.kind === 'call' ? tensorShape(element) : undefined;
    const listed = element.kind === 'call' && !made ? listTensorShape(element) : undefined;
    if (made && element.kind === 'call') fields.set(key, { shape: [1, ...made.dims], integer: isIntegerTensor(element) });
    else if (listed) fields.set(key, { shape: [1, ...listed.dims], integer: listed.integer });
  }
  return { fields, line: getitem.node.startPosition.row };
}

const collated = new WeakMap<CallResultValue, Value[] | undefined>();

/**
 * The batch the loop receives where the loader's collate_fn is a function of the script: what it makes of a list
 * of one sample (the dataset's traced sample, or the first item of a list the loader is given), where that is a
 * tuple of tensors, each of one row (`torch.zeros((len(pairs), args.src_pad_to), dtype=torch.long)`: sources and
 * targets padded to lengths of their own). Undefined for the default collate, and for a collate_fn that joins its
 * samples into rows of another count (graph batching, read in module-tree).
 */
function collatedBatch(program: ProgramModel, loop: PyNode): Value[] | undefined {
  const loader = loopDataLoader(program, loop);
  const collate = loader?.kwargs.get('collate_fn');
  if (!loader || collate?.kind !== 'function') return undefined;
  if (collated.has(loader)) return collated.get(loader);
  const tracer = new ForwardTrace(new Set());
  // The sample's tensors, made again by this trace (a tensor belongs to the trace that made it).
  const retraced = (value: Value): Value => value.kind === 'tensor' ? tracer.input(value.shape, value.integer, value.drawn)
    : value.kind === 'list' ? { ...value, items: value.items.map(retraced) } : value;
  const dataset = loader.kwargs.get('dataset') ?? loader.args[0];
  const sample = dataset?.kind === 'list' ? dataset.items[0] : loopSample(program, loop);
  const made = program.traceFunction(collate, [{ kind: 'list', items: [retraced(sample ?? UNKNOWN)], tuple: false }], tracer);
  // Only a batch the trace sized whole: an element it could not make (a library call it does not model) leaves the
  // dataset's sample as the better guess.
  const rows = made?.kind === 'list' && made.items.length > 0 && made.items.every((item) => item.kind === 'tensor' && item.shape[0] === 1) ? made.items : undefined;
  collated.set(loader, rows);
  return rows;
}

/**
 * Where the data sets a token length of the step's batch: the last size of a tensor the loader's `__getitem__` or
 * collate_fn makes (`torch.full((self.cfg["target_tokens"],), pad)`, `torch.zeros((len(pairs), args.tgt_pad_to))`)
 * that is `length`, else one more (the step drops a token: `tgt[:, :-1]`) or one less (it adds one: BOS before it).
 */
export function dataLengthOrigin(program: ProgramModel, call: PyNode, length: number): { line: number; how: How } | undefined {
  const loop = enclosingLoops(call).find((outer) => outer.type === 'for_statement');
  const collate = loop ? loopDataLoader(program, loop)?.kwargs.get('collate_fn') : undefined;
  const makers = new Set(['__getitem__', ...(collate?.kind === 'function' ? [collate.name] : [])]);
  const made = program.tensorCalls.filter((entry) => entry.inFunction !== undefined && makers.has(entry.inFunction))
    .map((entry) => partialTensorShape(entry.value)).filter((shape) => shape?.integer);
  for (const wanted of [length, length + 1, length - 1]) {
    const shape = made.find((m) => m!.dims[m!.dims.length - 1] === wanted);
    if (shape) return { line: shape.line, how: shape.how };
  }
  return undefined;
}

interface SampleOptions {
  /** Whether arguments the loop body computes from the batch are read by replaying the body. */
  throughLoopBody?: boolean;
  /** Set on the caller's call once throughCaller has hopped to it (one hop at most). */
  hopped?: boolean;
}

/**
 * The shapes (batch 1) of a model call's arguments where they are elements of the batches of the DataLoader the
 * enclosing loop iterates, as its dataset's `__getitem__` makes them; an argument that is not one is undefined,
 * and the whole is undefined where none is.
 */
export function sampleArguments(program: ProgramModel, call: PyNode, argumentNodes: readonly PyNode[], options: SampleOptions = {}): Array<SampleShape | undefined> | undefined {
  const loop = enclosingLoops(call).find((outer) => outer.type === 'for_statement');
  if (!loop) return throughCaller(program, call, argumentNodes, options);
  // `for batch in loader:` unpacked in the body (`x, y = batch`): only the body's replay can read it.
  const wholeName = options.throughLoopBody ? wholeBatchName(loop) : undefined;
  const listed = batchNames(loop) ?? (wholeName !== undefined ? [] : undefined);
  if (!listed) return undefined;
  // A collate_fn of the script makes the batch (its tensors hold one row already); else the default collate
  // stacks the dataset's samples.
  const batch = collatedBatch(program, loop);
  const made = batch ? { kind: 'list', items: batch, tuple: true } as const : loopSample(program, loop);
  // A dataset whose sample is one tensor (`return torch.rand(3, H, W)`), its batches bound to one name (`for x in
  // loader`) by the default collate: that name is the stacked tensor itself, the only element of the sample (a
  // collate_fn the trace could not run may crop or pad it).
  const single = wholeName !== undefined && !loopDataLoader(program, loop)?.kwargs.has('collate_fn')
    && (made?.kind === 'tensor' || (made?.kind === 'call' && !!tensorShape(made)));
  const sample = single ? { kind: 'list', items: [made], tuple: true } as const : made;
  const names = single ? [wholeName] : listed;
  const whole = single ? undefined : wholeName;
  if (sample?.kind !== 'list') return options.throughLoopBody && countsSteps(loop) ? madeInBody(program, loop, call, argumentNodes) : undefined;
  const elementShape = (element: Value | undefined): SampleShape | undefined => {
    if (batch) return element?.kind === 'tensor' ? { shape: element.shape, integer: element.integer } : undefined;
    // A Python number per sample (a word id, `torch.randint(0, V, ()).item()`): the default collate stacks them
    // into a (batch,) tensor, int64 for ints.
    if (element?.kind === 'number') return { shape: [1], integer: Number.isInteger(element.value) };
    if (element?.kind === 'call' && /\.item$/.test(element.path)) return { shape: [1], integer: isIntegerTensor(element) || /^torch\.randint\b/.test(element.path) };
    // A tensor made with a shape the script gives that the trace keeps as a call (`torch.randint(0, V, (T,))`).
    const made = element?.kind === 'call' ? tensorShape(element) : undefined;
    if (made && element?.kind === 'call') {
      const least = made.least?.some((d) => d !== undefined) ? { least: [undefined, ...made.least] } : {};
      return { shape: [1, ...made.dims], integer: isIntegerTensor(element) || element.path === 'torch.randint', ...least };
    }
    // A tensor of the lists the dataset built (`torch.tensor([ids for ids in choices])`).
    const listed = element?.kind === 'call' ? listTensorShape(element) : undefined;
    if (listed) return { shape: [1, ...listed.dims], integer: listed.integer };
    // Sized tensors joined (`torch.cat([torch.tensor([bos]), target[:-1]])`, a decoder's shifted input).
    const joined = element?.kind === 'call' && /^torch\.(cat|stack)$/.test(element.path) ? madeTensorShape(element) : undefined;
    if (joined && element?.kind === 'call') return { shape: [1, ...joined], integer: madeTensorIsInteger(element) };
    return element?.kind === 'tensor' ? { shape: [1, ...element.shape], integer: element.integer } : undefined;
  };
  let replayed: { names: Map<string, Value>; tracer: ForwardTrace } | undefined;
  const shapes = argumentNodes.map((node): SampleShape | undefined => {
    const name = carriedName(node);
    const index = name === undefined ? -1 : names.indexOf(name);
    const carried = elementShape(index >= 0 ? sample.items[index] : undefined);
    // A batch element the body reshapes before the call (`data = data.to(device).permute(0, 2, 1)`) is what the
    // replay makes of it, not the sample's element.
    const reshaped = carried && options.throughLoopBody && name !== undefined && reshapedBeforeCall(loop, call, name);
    if ((carried && !reshaped) || !options.throughLoopBody) return carried;
    // An argument the loop body computes from the batch (`xt = a * x0 + b * noise`, `inp = toks[:, :-1]`, a label
    // replaced by a null class): the body's assignments before the call, replayed on the sample's tensors.
    if (!replayed) {
      const tracer = new ForwardTrace(new Set());
      replayed = { names: replayLoopBody(program, loop, call, names, sample.items, tracer, elementShape, whole), tracer };
    }
    const value = program.evaluateTraced(node, replayed.names, replayed.tracer);
    return value?.kind === 'tensor' ? { shape: value.shape, integer: value.integer } : carried;
  });
  return shapes.some((shape) => shape !== undefined) ? shapes : undefined;
}

/** Whether a loop counts steps (`for step in range(n)`) rather than reading data. */
function countsSteps(loop: PyNode): boolean {
  const right = loop.childForFieldName('right');
  return right?.type === 'call' && right.childForFieldName('function')?.text === 'range';
}

/**
 * The step's arguments where the loop reads no data (`for step in range(n)`) and its body makes them before the
 * call from tensors of sizes the script gives (`x = mel_spectrogram(torch.randn(B, T), ...)`, a helper's
 * `torch.stft` included): the body's assignments replayed, as one sample (the first axis is the batch's). Undefined
 * where none comes out a tensor of known shape.
 */
function madeInBody(program: ProgramModel, loop: PyNode, call: PyNode, argumentNodes: readonly PyNode[]): Array<SampleShape | undefined> | undefined {
  const tracer = new ForwardTrace(new Set());
  // The tensors the function makes before its loop (a filterbank, a window) are replayed first: the body reads them.
  const fn = enclosingScope(loop);
  const made = fn.type === 'function_definition' ? replayLoopBody(program, fn, loop, [], [], tracer, () => undefined) : undefined;
  const names = replayLoopBody(program, loop, call, [], [], tracer, () => undefined, undefined, made);
  const shapes = argumentNodes.map((node): SampleShape | undefined => {
    const name = carriedName(node);
    // Only what the body itself computed: a name it never assigned is not read here.
    if (name === undefined || !names.has(name) || names.get(name) === made?.get(name)) return undefined;
    const value = program.evaluateTraced(node, names, tracer);
    return value?.kind === 'tensor' && value.shape.length >= 2 ? { shape: [1, ...value.shape.slice(1)], integer: value.integer } : undefined;
  });
  return shapes.some((shape) => shape !== undefined) ? shapes : undefined;
}

/**
 * Whether the loop body assigns `name` before the call from an expression that may change its shape: anything but
 * the name passed on through CARRIES methods (`x = x.to(device)` keeps it).
 */
function reshapedBeforeCall(loop: PyNode, call: PyNode, name: string): boolean {
  const body = loop.childForFieldName('body');
  if (!body) return false;
  const targets = (left: PyNode): PyNode[] => (left.type === 'pattern_list' || left.type === 'tuple_pattern'
    ? left.namedChildren.filter((c): c is PyNode => !!c) : [left]);
  const visit = (block: PyNode): boolean => block.namedChildren.some((statement) => {
    if (!statement || statement.startIndex >= call.startIndex) return false;
    if (statement.type === 'with_statement') {
      const inner = statement.childForFieldName('body');
      return !!inner && visit(inner);
    }
    const assignment = statement.type === 'expression_statement' ? statement.namedChildren[0] : undefined;
    const [left, right] = [assignment?.childForFieldName('left'), assignment?.childForFieldName('right')];
    if (assignment?.type !== 'assignment' || !left || !right) return false;
    const lefts = targets(left);
    const rights = right.type === 'expression_list' ? right.namedChildren.filter((c): c is PyNode => !!c) : [right];
    return lefts.some((target, k) => target.type === 'identifier' && target.text === name
      && (lefts.length !== rights.length ? true : carriedName(rights[k]!) !== name));
  });
  return visit(body);
}

/** The names of a function's parameters, in order (`self` included; `*args` and `**kwargs` left out). */
function parameterNames(fn: PyNode): string[] {
  return (fn.childForFieldName('parameters')?.namedChildren ?? []).flatMap((parameter) => {
    if (parameter?.type === 'identifier') return [parameter.text];
    const name = parameter?.type === 'default_parameter' || parameter?.type === 'typed_default_parameter' ? parameter.childForFieldName('name') : parameter?.type === 'typed_parameter' ? parameter.namedChildren[0] : undefined;
    return name?.type === 'identifier' ? [name.text] : [];
  });
}

/**
 * A model call inside a helper the training loop calls (`def training_losses(self, model, x0, t, y)` holding
 * `model(xt, t, y)`, called as `diffusion.training_losses(model, x, t, y)` in `for x, y in loader:`): the arguments
 * the helper passes on unchanged from its parameters take the shapes the loop's call gives those parameters; the
 * ones the helper computes itself stay undefined. One hop, to the first caller inside a loop.
 */
function throughCaller(program: ProgramModel, call: PyNode, argumentNodes: readonly PyNode[], options: SampleOptions): Array<SampleShape | undefined> | undefined {
  const fn = enclosingScope(call);
  if (options.hopped || fn.type !== 'function_definition') return undefined;
  const name = fn.childForFieldName('name')?.text;
  const parameters = parameterNames(fn);
  // A method takes `self` first, unless it is a static one.
  const owner = fn.parent?.type === 'decorated_definition' ? fn.parent : fn;
  const method = owner.parent?.parent?.type === 'class_definition' && !/^@staticmethod\b/.test(owner.text);
  const caller = treeIndex(program.root).calls.find((site) => {
    const callee = site.childForFieldName('function');
    const called = callee?.type === 'attribute' ? callee.childForFieldName('attribute')?.text : method ? undefined : callee?.text;
    return called === name && enclosingLoops(site).some((loop) => loop.type === 'for_statement');
  });
  if (!caller) return undefined;
  // A method called on its instance receives `self` before the call's first argument.
  const skipped = method && caller.childForFieldName('function')?.type === 'attribute' ? 1 : 0;
  const passed = caller.childForFieldName('arguments')?.namedChildren.filter((n): n is PyNode => !!n && n.type !== 'comment') ?? [];
  const positional = passed.filter((n) => n.type !== 'keyword_argument');
  const keywords = new Map(passed.flatMap((n) => {
    const [key, value] = [n.childForFieldName('name')?.text, n.childForFieldName('value')];
    return n.type === 'keyword_argument' && key !== undefined && value ? [[key, value] as const] : [];
  }));
  const given = argumentNodes.map((node): PyNode | undefined => {
    const carried = carriedName(node);
    const index = carried === undefined ? -1 : parameters.indexOf(carried);
    if (index < skipped) return undefined;
    return keywords.get(carried!) ?? positional[index - skipped];
  });
  const outer = given.filter((node): node is PyNode => node !== undefined);
  if (outer.length === 0) return undefined;
  const shapes = sampleArguments(program, caller, outer, { ...options, hopped: true });
  if (!shapes) return undefined;
  let next = 0;
  return given.map((node) => (node ? shapes[next++] : undefined));
}

/** Statements replayed at most, so a long loop body costs little. */
const MAX_REPLAYED_STATEMENTS = 64;

/**
 * The names the loop body binds before `call`, each evaluated (with a tracer, batch 1) from the batch's elements
 * and what earlier statements bound: plain and tuple assignments, also inside `with` blocks; a name whose value
 * the replay cannot compute is bound to nothing known.
 */
function replayLoopBody(program: ProgramModel, loop: PyNode, call: PyNode, names: ReadonlyArray<string | undefined>, items: readonly Value[], tracer: ForwardTrace,
  elementShape: (element: Value | undefined) => SampleShape | undefined, whole?: string, before?: ReadonlyMap<string, Value>): Map<string, Value> {
  const bound = new Map<string, Value>(before);
  const tensors = items.map((item): Value => {
    const shape = elementShape(item);
    return shape ? tracer.input(shape.shape, shape.integer) : UNKNOWN;
  });
  for (const [i, name] of names.entries()) {
    if (name !== undefined && tensors[i] && tensors[i].kind !== 'unknown') bound.set(name, tensors[i]);
  }
  if (whole !== undefined) bound.set(whole, { kind: 'list', items: tensors, tuple: true });
  let budget = MAX_REPLAYED_STATEMENTS;
  const assign = (target: PyNode, value: Value | undefined): void => {
    if (target.type === 'identifier') {
      bound.set(target.text, value ?? UNKNOWN);
      return;
    }
    if (target.type !== 'pattern_list' && target.type !== 'tuple_pattern') return;
    const targets = target.namedChildren.filter((c): c is PyNode => !!c);
    const parts = value?.kind === 'list' && value.items.length === targets.length ? value.items : undefined;
    targets.forEach((t, k) => assign(t, parts?.[k]));
  };
  // `(t.to(device) for t in batch)`, unpacked into names: the expression applied to each of the batch's tensors.
  const mappedOverItems = (expression: PyNode): Value | undefined => {
    if (expression.type !== 'generator_expression' && expression.type !== 'list_comprehension') return undefined;
    const clauses = expression.namedChildren.filter((c): c is PyNode => !!c && c.type !== 'comment').slice(1);
    const clause = clauses[0];
    const variable = clause?.childForFieldName('left');
    const body = expression.childForFieldName('body');
    const iterableNode = clause?.childForFieldName('right');
    if (clauses.length !== 1 || clause?.type !== 'for_in_clause' || variable?.type !== 'identifier' || !body || !iterableNode) return undefined;
    const iterable = program.evaluateTraced(iterableNode, bound, tracer);
    if (iterable?.kind !== 'list') return undefined;
    const items = iterable.items.map((item) => program.evaluateTraced(body, new Map([...bound, [variable.text, item]]), tracer) ?? UNKNOWN);
    return { kind: 'list', items, tuple: true };
  };
  const replay = (block: PyNode): boolean => {
    for (const statement of block.namedChildren) {
      if (!statement || budget-- <= 0) return false;
      const holdsCall = statement.startIndex <= call.startIndex && statement.endIndex >= call.endIndex;
      if (statement.type === 'with_statement') {
        const body = statement.childForFieldName('body');
        if (body && !replay(body)) return false;
        if (holdsCall) return false;
        continue;
      }
      if (holdsCall) return false;
      const assignment = statement.type === 'expression_statement' ? statement.namedChildren[0] : undefined;
      if (assignment?.type !== 'assignment') continue;
      const [left, right] = [assignment.childForFieldName('left'), assignment.childForFieldName('right')];
      if (!left || !right) continue;
      // `a, b = e1, e2`: each side's element on its own (no tuple is built of tensors).
      const rights = right.type === 'expression_list' ? right.namedChildren.filter((c): c is PyNode => !!c) : [right];
      const values = rights.map((r) => mappedOverItems(r) ?? program.evaluateTraced(r, bound, tracer));
      assign(left, values.length === 1 ? values[0] : { kind: 'list', items: values.map((v) => v ?? UNKNOWN), tuple: true });
    }
    return true;
  };
  const body = loop.childForFieldName('body');
  if (body) replay(body);
  return bound;
}
