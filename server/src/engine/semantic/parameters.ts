// Which parameters learn: the optimizers the file builds and the models whose parameters they receive, the models
// the file freezes (`requires_grad_(False)`, `p.requires_grad = False`), and the models a training loop runs. A model
// is known by the dotted names it goes by in the file: its own, those of the wrappers around it (`DDP(model)`,
// `model.module`, `torch.compile(model)`, `accelerator.prepare(model)`), and through parameters the names callers
// pass. OOM113 (a frozen model's forward records a graph) and OOM114 (an optimizer over part of a model) ask here.
import type { Node } from '../parser';
import { callArguments, calleeName, callReceiver, children, contains, dottedName, enclosingFunction, enclosingLoops, nodesWithin, stringLiteral } from '../syntax';
import { argumentFor, parametersOf, possibleValues } from './bindings';
import type { Parameter } from './bindings';
import type { ClassInfo, SemanticModel } from './model';
import { NodeMemo } from '../node-memo';

/** The names a model may go by, and whether some path could not be followed. */
export interface ModelNames {
  names: Set<string>;
  unknown: boolean;
}

/** Methods that return the module they are called on (or one with the same parameters). */
const SAME_MODULE_METHODS = /^(to|cuda|cpu|half|float|double|bfloat16|train|eval|requires_grad_|share_memory|to_empty)$/;
/** Functions whose result trains the parameters of their (first) argument. */
const WRAPPING_CALLS = /^(DistributedDataParallel|DDP|DataParallel|FullyShardedDataParallel|FSDP|fully_shard|compile|unwrap_model|prepare_model|prepare|get_peft_model|prepare_model_for_kbit_training|prepare_model_for_int8_training|PeftModel|wrap|checkpoint_wrapper)$/;
/** Attributes that are the same module under a wrapper: `ddp.module`, `compiled._orig_mod`. */
const WRAPPER_ATTRIBUTES = new Set(['module', '_orig_mod']);

/** `ddp.module.encoder` → `ddp.encoder`: a wrapper's inner module has the wrapper's parameters. */
function normalize(name: string): string {
  const parts = name.split('.');
  return [parts[0]!, ...parts.slice(1).filter((part) => !WRAPPER_ATTRIBUTES.has(part))].join('.');
}

/**
 * The argument a call of a local function passes to the parameter the function hands back: `model` in
 * `unwrap(model)` where `def unwrap(m): return m.module if isinstance(m, DDP) else m`.
 */
function returnedArgument(model: SemanticModel, call: Node): Node | undefined {
  const info = model.resolveLocalFunction(call);
  if (!info) return undefined;
  const parameters = parametersOf(info.node);
  let returned: Parameter | undefined;
  for (const statement of model.nodesWithin('returnStatements', info.node)) {
    if (enclosingFunction(statement).id !== info.node.id) continue;
    const value = children(statement)[0];
    if (!value || !isAliasForm(value)) return undefined;
    const branches = value.type === 'conditional_expression' ? children(value).filter((_, i) => i !== 1) : [value];
    for (const branch of branches) {
      const head = (dottedName(unwrap(branch)) ?? '').split('.')[0];
      const parameter = parameters.find((candidate) => candidate.name === head);
      if (!parameter || (returned && returned !== parameter)) return undefined;
      returned = parameter;
    }
  }
  return returned ? argumentFor(call, info, returned) : undefined;
}

/** The expression a wrapper wraps: `model` in `DDP(model.to(device), ...)`, `model.cuda()`, `accelerator.prepare(model)`. */
function unwrap(node: Node, model?: SemanticModel): Node {
  let current = node;
  for (let i = 0; i < 8; i++) {
    if (current.type === 'parenthesized_expression' && children(current).length === 1) {
      current = children(current)[0]!;
      continue;
    }
    if (current.type !== 'call') return current;
    const method = calleeName(current) ?? '';
    const receiver = callReceiver(current);
    if (receiver && SAME_MODULE_METHODS.test(method)) {
      current = receiver;
      continue;
    }
    const { positional, keywords } = callArguments(current);
    const wrapped = keywords.get('model') ?? keywords.get('module') ?? positional[0];
    if (WRAPPING_CALLS.test(method) && wrapped) {
      current = wrapped;
      continue;
    }
    const returned = model ? returnedArgument(model, current) : undefined;
    if (returned) {
      current = returned;
      continue;
    }
    return current;
  }
  return current;
}

/** The object chain of a dotted expression, longest first: `a.b.c`, `a.b`, `a`. */
function prefixes(node: Node): Node[] {
  const result: Node[] = [];
  for (let current: Node | null = node; current && (current.type === 'attribute' || current.type === 'identifier'); current = current.type === 'attribute' ? current.childForFieldName('object') : null) {
    result.push(current);
  }
  return result;
}

/** The dotted names a model expression may go by (see the module comment). */
export function modelNames(model: SemanticModel, node: Node): ModelNames {
  return model.memoFor('model-names', node.id, () => {
    const result: ModelNames = { names: new Set(), unknown: false };
    collectNames(model, node, 4, result, new Set());
    return result;
  });
}

function collectNames(model: SemanticModel, node: Node, depth: number, result: ModelNames, seen: Set<number>, suffix = ''): void {
  const target = unwrap(node, model);
  if (target.type === 'conditional_expression') {
    const [whenTrue, , whenFalse] = children(target);
    for (const branch of [whenTrue, whenFalse]) if (branch) collectNames(model, branch, depth, result, seen, suffix);
    return;
  }
  const dotted = dottedName(target);
  if (!dotted) {
    result.unknown = true;
    return;
  }
  result.names.add(normalize(dotted + suffix));
  if (depth === 0 || seen.has(target.id)) return;
  seen.add(target.id);
  for (const prefix of prefixes(target)) {
    const rest = dotted.slice(prefix.text.length) + suffix;
    // `self` in a method: the instances the file makes of the class.
    if (prefix.type === 'identifier' && prefix.text === 'self') {
      const cls = model.functionOf(prefix)?.classInfo;
      for (const instance of cls ? model.instancesOf(cls) : []) result.names.add(normalize(instance + rest));
      continue;
    }
    const { values, unknown } = possibleValues(model, prefix, true);
    // A parameter no call of the file binds (a callback, a function other files call): what it names is not known.
    if (unknown && values.length === 0 && prefix.type === 'identifier') result.unknown = true;
    for (const value of values) {
      if (value.element) continue;
      // `model, optimizer = accelerator.prepare(model, optimizer)`, `engine, *_ = deepspeed.initialize(model=model)`,
      // `net, opt = build(cfg)` where `build` returns `model, optimizer`.
      const sources = value.index !== undefined ? unpackedSources(model, value.node, value.index) : [value.node];
      for (const source of sources) if (isAliasForm(source)) collectNames(model, source, depth - 1, result, seen, rest);
    }
  }
}

/** What position `index` of `a, b = call(...)` holds: an argument of `prepare`/`initialize`, or a local function's returned tuple. */
function unpackedSources(model: SemanticModel, call: Node, index: number): Node[] {
  const name = calleeName(call) ?? '';
  const { positional, keywords } = callArguments(call);
  if (/^(prepare|prepare_model)$/.test(name)) return positional[index] ? [positional[index]!] : [];
  if (/initialize/.test(name)) return index === 0 ? [keywords.get('model') ?? positional[0]].filter((node): node is Node => !!node) : [];
  const info = model.resolveLocalFunction(call);
  if (!info) return [];
  const elements: Node[] = [];
  for (const statement of model.nodesWithin('returnStatements', info.node)) {
    if (enclosingFunction(statement).id !== info.node.id) continue;
    const value = children(statement)[0];
    const element = value && ['tuple', 'expression_list', 'list'].includes(value.type) ? children(value)[index] : undefined;
    if (element) elements.push(element);
  }
  return elements;
}

/** A value that is another name for a model already made: a name, `x.module`, a wrapper call, a conditional of those. */
export function isAliasForm(node: Node): boolean {
  const target = unwrap(node);
  if (target.type === 'conditional_expression') return children(target).filter((_, i) => i !== 1).every(isAliasForm);
  return target.type === 'identifier' || target.type === 'attribute';
}

/** Whether two sets of names overlap: one name is another, or lies inside it (`model.fc` inside `model`). */
export function related(a: Iterable<string>, b: Iterable<string>): boolean {
  const bs = [...b];
  for (const x of a) for (const y of bs) if (x === y || x.startsWith(`${y}.`) || y.startsWith(`${x}.`)) return true;
  return false;
}

/** Whether `inner` lies inside (or is) one of `outer`. */
export function coveredBy(inner: Iterable<string>, outer: Iterable<string>): boolean {
  const os = [...outer];
  for (const x of inner) for (const y of os) if (x === y || x.startsWith(`${y}.`)) return true;
  return false;
}

// ---------------------------------------------------------------- optimizers

export interface ParameterSource {
  /** The names of the module whose parameters are given (`model.fc` for `model.fc.parameters()`). */
  names: Set<string>;
  /** The module expression as written. */
  text: string;
}

export interface OptimizerInfo {
  call: Node;
  sources: ParameterSource[];
  /** Some parameters come from where the file does not say. */
  unknown: boolean;
  /** `filter(lambda p: p.requires_grad, ...)`: the optimizer takes what is not frozen, whatever that is. */
  filtered: boolean;
}

const OPTIMIZER_CLASS = /^(Adam|AdamW|SGD|RMSprop|Adagrad|Adadelta|Adamax|NAdam|RAdam|ASGD|Rprop|LBFGS|SparseAdam|Adafactor|Lion|LAMB|Lamb|AdamW8bit|Adam8bit|PagedAdamW\w*|PagedAdam\w*|Adam\w*8bit|FusedAdam|FusedLAMB|FusedSGD|DeepSpeedCPUAdam|Shampoo|Sophia\w*|Muon|Prodigy|SAM|ASAM|GSAM|Lookahead|Ranger\w*|AdaBelief|NovoGrad|MADGRAD|Adan|Yogi|AdaBound|SGDW|Nero|DAdapt\w*|ScheduleFree\w*)$/;
/** Whether a class name is an optimizer's (torch.optim's, or a known library's). */
export function isOptimizerClass(name: string): boolean {
  return OPTIMIZER_CLASS.test(name);
}

const OPTIMIZER_HELPER = /^(create|build|get|make|init|configure|setup)_?optimi[sz]ers?(_v\d+)?$/i;

/** Whether a call builds an optimizer: a torch.optim class, a known optimizer class, a local Optimizer subclass, a factory. */
function optimizerKind(model: SemanticModel, call: Node): 'class' | 'helper' | undefined {
  const fn = call.childForFieldName('function');
  const qualified = model.qualify(fn) ?? '';
  const tail = qualified.split('.').pop() ?? '';
  if (/lr_scheduler|[Ss]cheduler|^LambdaLR$|LR$/.test(qualified)) return undefined;
  if (/^torch\.optim\.[A-Z]\w*$/.test(qualified) && tail !== 'Optimizer') return 'class';
  if (OPTIMIZER_CLASS.test(tail)) return 'class';
  const local = model.classesNamed(tail).find((cls) => cls.baseNames.some((base) => /(^|\.)Optimizer$/.test(base)));
  if (local) return 'class';
  if (OPTIMIZER_HELPER.test(tail)) return 'helper';
  return undefined;
}

/** Hugging Face / TRL trainers build an optimizer over the model they are given. */
function isLibraryTrainer(model: SemanticModel, call: Node): boolean {
  const qualified = model.qualify(call.childForFieldName('function')) ?? '';
  return /^(transformers|trl)(\.|$)/.test(qualified) && /Trainer$/.test(qualified);
}

interface SourceCollection {
  sources: ParameterSource[];
  unknown: boolean;
  filtered: boolean;
}

/** Method calls that hand over a module's parameters. */
const PARAMETER_METHODS = new Set(['parameters', 'named_parameters']);
/** Calls that only pass their arguments' parameters along. */
const PASS_ALONG = /^(chain|list|tuple|iter|sorted|set|filter|from_iterable)$/;

function collectSources(model: SemanticModel, node: Node | undefined, depth: number, acc: SourceCollection, seen: Set<number>): void {
  if (!node) {
    acc.unknown = true;
    return;
  }
  if (depth < 0 || seen.has(node.id)) return;
  seen.add(node.id);
  switch (node.type) {
    case 'call': {
      const method = calleeName(node) ?? '';
      const receiver = callReceiver(node);
      if (receiver && PARAMETER_METHODS.has(method)) {
        const names = modelNames(model, receiver).names;
        // `get_model().parameters()`: a module the file does not name.
        if (names.size === 0) acc.unknown = true;
        acc.sources.push({ names, text: unwrap(receiver, model).text });
        return;
      }
      const { positional, keywords } = callArguments(node);
      if (PASS_ALONG.test(method)) {
        if (method === 'filter' && /requires_grad/.test(positional[0]?.text ?? '')) acc.filtered = true;
        for (const arg of method === 'filter' ? positional.slice(1) : positional) collectSources(model, arg, depth - 1, acc, seen);
        return;
      }
      // A helper given the model (`param_groups(model, wd)`, `model.get_optimizer_groups()`): its parameters, whole.
      const given = [...positional, ...keywords.values(), ...(receiver ? [receiver] : [])].filter((arg) => !!dottedName(unwrap(arg)));
      const models = given.filter((arg) => model.isModelRef(unwrap(arg)));
      if (models.length === 0) acc.unknown = true;
      for (const arg of models) acc.sources.push({ names: modelNames(model, arg).names, text: unwrap(arg).text });
      return;
    }
    case 'list':
    case 'tuple':
    case 'set':
    case 'expression_list':
    case 'parenthesized_expression':
      for (const child of children(node)) collectSources(model, child, depth, acc, seen);
      return;
    case 'list_comprehension':
    case 'generator_expression':
    case 'set_comprehension':
    case 'dictionary_comprehension':
      if (children(node).some((child) => child.type === 'if_clause' && /requires_grad/.test(child.text))) acc.filtered = true;
      for (const clause of children(node).filter((child) => child.type === 'for_in_clause')) collectSources(model, clause.childForFieldName('right') ?? undefined, depth - 1, acc, seen);
      return;
    case 'dictionary':
      // A parameter group: `{"params": ..., "lr": 1e-4}`; only "params" holds parameters.
      for (const pair of children(node)) {
        const key = pair.type === 'pair' ? pair.childForFieldName('key') : undefined;
        if (pair.type === 'pair' && (stringLiteral(key) === 'params' || stringLiteral(key) === undefined)) collectSources(model, pair.childForFieldName('value') ?? undefined, depth, acc, seen);
        else if (pair.type === 'dictionary_splat') collectSources(model, children(pair)[0], depth - 1, acc, seen);
      }
      return;
    case 'integer':
    case 'float':
    case 'string':
    case 'true':
    case 'false':
    case 'none':
      return;
    case 'binary_operator':
      collectSources(model, node.childForFieldName('left') ?? undefined, depth, acc, seen);
      collectSources(model, node.childForFieldName('right') ?? undefined, depth, acc, seen);
      return;
    case 'subscript':
      collectSources(model, node.childForFieldName('value') ?? undefined, depth - 1, acc, seen);
      return;
    case 'identifier':
    case 'attribute': {
      // `params = list(a.parameters()) + ...`, then grown by `params.extend(b.parameters())` or `groups += [...]`.
      const name = dottedName(node)!;
      const { values, unknown } = possibleValues(model, node);
      let found = values.length > 0;
      for (const value of values) collectSources(model, value.node, depth - 1, acc, seen);
      for (const method of ['append', 'extend', 'insert']) {
        for (const call of model.callsNamed(method)) {
          if (dottedName(callReceiver(call)) !== name) continue;
          found = true;
          for (const arg of callArguments(call).positional) collectSources(model, arg, depth - 1, acc, seen);
        }
      }
      for (const augmented of model.augmentedAssignmentsTo(name)) {
        found = true;
        collectSources(model, augmented.childForFieldName('right') ?? undefined, depth - 1, acc, seen);
      }
      if (unknown && !found) acc.unknown = true;
      // A model passed as it is (`SGD(model, ...)` is an error, but `Lookahead(base_optimizer)` wraps another one).
      return;
    }
    default:
      acc.unknown = true;
  }
}

/** Callee names that may build an optimizer (or a trainer that builds one): the rest need no closer look. */
function mayBuildOptimizer(model: SemanticModel, name: string): boolean {
  return OPTIMIZER_CLASS.test(name) || OPTIMIZER_HELPER.test(name) || /Trainer$/.test(name) || /^[A-Z]/.test(name) && localOptimizerClasses(model).has(name);
}

function localOptimizerClasses(model: SemanticModel): Set<string> {
  return model.memo('local-optimizer-classes', () => new Set(model.classes.filter((cls) => cls.baseNames.some((base) => /(^|\.)Optimizer$/.test(base))).map((cls) => cls.name)));
}

/** The optimizer a call builds, with the parameters it receives, or undefined for any other call (memoised). */
export function optimizerAt(model: SemanticModel, call: Node): OptimizerInfo | undefined {
  // Most calls are not optimizers; their callee name says so without resolving imports.
  const name = calleeName(call);
  if (!name || !(mayBuildOptimizer(model, name) || (/^[A-Z]/.test(name) && /optim/.test(call.childForFieldName('function')?.text ?? '')))) return undefined;
  return model.memoFor('optimizer', call.id, () => {
    const kind = optimizerKind(model, call);
    const trainer = !kind && isLibraryTrainer(model, call);
    if (!kind && !trainer) return undefined;
    const acc: SourceCollection = { sources: [], unknown: false, filtered: false };
    const { positional, keywords } = callArguments(call);
    if (trainer) {
      const given = keywords.get('model') ?? positional[0];
      // A Trainer without a model (model_init=...) builds one the file does not show.
      if (given) acc.sources.push({ names: modelNames(model, given).names, text: unwrap(given).text });
      else acc.unknown = true;
    } else if (kind === 'helper') {
      collectSources(model, call, 4, acc, new Set());
    } else {
      // `Lookahead(base)`, `SAM(params, base_optimizer, ...)`: the params argument; an optimizer given as the
      // parameters wraps another optimizer, whose own constructor says what it receives.
      const params = keywords.get('params') ?? positional[0];
      collectSources(model, params, 4, acc, new Set());
    }
    return { call, sources: acc.sources, unknown: acc.unknown, filtered: acc.filtered };
  });
}

/** The optimizers built within a region (a statement, or the whole file, memoised). */
export function optimizers(model: SemanticModel, region: Node = model.root): OptimizerInfo[] {
  return model.memoFor('optimizers', region.id, () => {
    // One statement (incremental analysis): its own calls, not the file's index.
    if (region !== model.root) {
      const calls: Node[] = [];
      calls.push(...model.nodesWithin('calls', region));
      return optimizersAmong(model, calls);
    }
    // Only the calls optimizerAt may answer for: those its callee name alone allows (kept per statement, so an
    // edit does not look at every call of the file again), and those of the file's own optimizer classes.
    const candidates = new Set<Node>();
    for (const statement of model.root.children) for (const call of optimizerCandidates(model, statement)) candidates.add(call);
    for (const name of localOptimizerClasses(model)) for (const call of model.callsNamed(name)) candidates.add(call);
    const result: OptimizerInfo[] = [];
    for (const call of candidates) {
      const info = optimizerAt(model, call);
      if (info) result.push(info);
    }
    return result.sort((a, b) => a.call.startIndex - b.call.startIndex);
  });
}

const optimizerCandidatesCache = new NodeMemo<Node[]>();

/** What a callee name alone says about optimizerAt, by name: the same few names recur in every statement of a file. */
const optimizerCalleeKinds = new Map<string, 'builds' | 'capitalised' | 'other'>();

function optimizerCalleeKind(name: string): 'builds' | 'capitalised' | 'other' {
  let kind = optimizerCalleeKinds.get(name);
  if (!kind) {
    kind = OPTIMIZER_CLASS.test(name) || OPTIMIZER_HELPER.test(name) || /Trainer$/.test(name) ? 'builds' : /^[A-Z]/.test(name) ? 'capitalised' : 'other';
    // Names come from every file a session opens: the table is bounded.
    if (optimizerCalleeKinds.size >= 4096) optimizerCalleeKinds.clear();
    optimizerCalleeKinds.set(name, kind);
  }
  return kind;
}

/**
 * The calls of a top-level statement that optimizerAt may answer for by their callee name alone (an optimizer
 * class or helper, a trainer, a capitalised callee spelled with `optim`), cached on the statement.
 */
function optimizerCandidates(model: SemanticModel, statement: Node): Node[] {
  let calls = optimizerCandidatesCache.get(statement);
  if (!calls) {
    calls = [];
    // The statement's calls by callee name: a name is tested once, not once per call (by forEach: a document's
    // first analysis runs this for every statement before V8 optimises it, when a Map iterator allocates each step).
    const found = calls;
    model.statementCallsByCallee(statement).forEach((named, name) => {
      const kind = optimizerCalleeKind(name);
      if (kind === 'builds') found.push(...named);
      else if (kind === 'capitalised') found.push(...named.filter((call) => /optim/.test(call.childForFieldName('function')?.text ?? '')));
    });
    optimizerCandidatesCache.set(statement, calls);
  }
  return calls;
}

/** The optimizers that some of the given calls (in document order) build. */
export function optimizersAmong(model: SemanticModel, calls: readonly Node[]): OptimizerInfo[] {
  const result: OptimizerInfo[] = [];
  for (const call of calls) {
    const name = calleeName(call);
    if (!name || !(mayBuildOptimizer(model, name) || /^[A-Z]/.test(name))) continue;
    const info = optimizerAt(model, call);
    if (info) result.push(info);
  }
  return result;
}

// ---------------------------------------------------------------- freezes

export interface Freezes {
  /** Names of the modules (or parameters) whose requires_grad the file turns off. */
  names: Set<string>;
  /** Some freeze acts on something the file does not name. */
  unknown: boolean;
}

/** What a parameter-loop target or a module expression names: `p` in `for p in m.parameters()` names `m`. */
function frozenNames(model: SemanticModel, node: Node, acc: Freezes): void {
  const target = unwrap(node);
  if (target.type === 'identifier') {
    const iterable = iterableBinding(model, target);
    if (iterable) {
      const collection: SourceCollection = { sources: [], unknown: false, filtered: false };
      collectSources(model, iterable, 4, collection, new Set());
      for (const source of collection.sources) for (const name of source.names) acc.names.add(name);
      // `for m in [teacher_a, teacher_b]: m.requires_grad_(False)`: the list's modules.
      if (collection.unknown && collection.sources.length === 0) {
        const names = modelNames(model, target);
        if (names.unknown || names.names.size <= 1) acc.unknown = true;
        for (const name of names.names) if (name !== target.text) acc.names.add(name);
      }
      return;
    }
  }
  const names = modelNames(model, target);
  if (!dottedName(target) || names.unknown) acc.unknown = true;
  for (const name of names.names) acc.names.add(name);
}

/** The iterable a name is bound to by an enclosing `for` statement or comprehension, if it is a loop target. */
function iterableBinding(model: SemanticModel, name: Node): Node | undefined {
  for (let current = name.parent; current; current = current.parent) {
    if (['list_comprehension', 'generator_expression', 'set_comprehension', 'dictionary_comprehension'].includes(current.type)) {
      for (const clause of children(current).filter((child) => child.type === 'for_in_clause')) {
        const left = clause.childForFieldName('left');
        if (left && model.targetNames(left).includes(name.text)) return clause.childForFieldName('right') ?? undefined;
      }
    }
    if (current.type === 'function_definition') break;
  }
  const definitions = model.reachingDefinitions(name.text, name);
  const loop = definitions.find((definition) => definition.kind === 'for');
  return loop?.site.childForFieldName('right') ?? undefined;
}

const PEFT_FREEZES = /^(get_peft_model|prepare_model_for_kbit_training|prepare_model_for_int8_training)$/;

/** The file's freezes (memoised): `requires_grad_(False)`, `.requires_grad = False`, `p.detach_()`, PEFT, `freeze*()`. */
export function freezes(model: SemanticModel): Freezes {
  return model.memo('freezes', () => freezesWithin(model, model.root));
}

/** The freezes written within a region (a statement, or the whole module). */
export function freezesWithin(model: SemanticModel, region: Node): Freezes {
  const acc: Freezes = { names: new Set(), unknown: false };
  const inside = (node: Node) => contains(region, node);
  for (const call of model.callsNamed('requires_grad_')) {
    if (!inside(call)) continue;
    const { positional, keywords } = callArguments(call);
    const flag = positional[0] ?? keywords.get('requires_grad');
    const receiver = callReceiver(call);
    // `x.requires_grad_()` and `x.requires_grad_(True)` turn gradients on.
    if (!flag || flag.type === 'true' || !receiver) continue;
    frozenNames(model, receiver, acc);
  }
  // The whole module's text is asked of the model, which counts the word statement by statement (an edited document's
  // text is not made whole for it).
  const spelled = region === model.root ? model.spells('requires_grad') : region.text.includes('requires_grad');
  const assignments = spelled ? model.assignments : [];
  for (const assignment of assignments) {
    const left = assignment.childForFieldName('left');
    if (!inside(assignment) || left?.type !== 'attribute' || left.childForFieldName('attribute')?.text !== 'requires_grad') continue;
    if (assignment.childForFieldName('right')?.type === 'true') continue;
    frozenNames(model, left.childForFieldName('object')!, acc);
  }
  for (const call of model.callsNamed('detach_')) {
    const receiver = callReceiver(call);
    if (!inside(call)) continue;
    if (receiver?.type === 'identifier' && iterableBinding(model, receiver)) frozenNames(model, receiver, acc);
  }
  // PEFT freezes the base model; `model.freeze()`, `model.freeze_feature_encoder()`, `freeze(backbone)`.
  const freezing = [...model.calleeNames()].filter((name) => PEFT_FREEZES.test(name) || /^freeze(_|$)/.test(name));
  for (const call of freezing.flatMap((name) => model.callsNamed(name))) {
    if (!inside(call)) continue;
    const name = calleeName(call) ?? '';
    const receiver = callReceiver(call);
    const first = callArguments(call).positional[0];
    if (PEFT_FREEZES.test(name) && first) frozenNames(model, first, acc);
    else if (/^freeze(_|$)/.test(name) && receiver && model.isModelRef(unwrap(receiver))) frozenNames(model, receiver, acc);
    else if (/^freeze(_|$)/.test(name) && !receiver && first) frozenNames(model, first, acc);
  }
  return acc;
}

/** Models run through `torch.func.functional_call(model, params, ...)`: their parameters are given explicitly. */
export function functionalCallModels(model: SemanticModel): Set<string> {
  return model.memo('functional-call-models', () => {
    const names = new Set<string>();
    for (const call of model.callsNamed('functional_call')) {
      const first = callArguments(call).positional[0];
      if (first) for (const name of modelNames(model, first).names) names.add(name);
    }
    return names;
  });
}

// ---------------------------------------------------------------- training-loop forwards

export interface TrainingForward {
  call: Node;
  /** The model expression as written (`teacher`, `self.ema`), the receiver of `.forward(...)` / `.module(...)`. */
  reference: Node;
  names: ModelNames;
}

/** The model a forward call runs: `m` in `m(x)`, `m.forward(x)`, `m.module(x)`. */
function forwardReference(call: Node): Node | undefined {
  const fn = call.childForFieldName('function');
  if (!fn) return undefined;
  if (fn.type === 'attribute' && /^(forward|module)$/.test(fn.childForFieldName('attribute')?.text ?? '')) return fn.childForFieldName('object') ?? undefined;
  return fn.type === 'identifier' || fn.type === 'attribute' ? fn : undefined;
}

/**
 * Forwards written in the body of a training loop (a loop that itself calls backward), outside loops over other
 * data nested in it; forwards inside helpers the loop calls are the helpers' (memoised). With a region (a statement),
 * only the loops inside it.
 */
export function trainingLoopForwards(model: SemanticModel, region: Node = model.root): TrainingForward[] {
  return model.memoFor('training-loop-forwards', region.id, () => {
    const result: TrainingForward[] = [];
    const seen = new Set<number>();
    for (const loop of model.nodesWithin('loops', region)) {
      if (!callsBackward(model, loop)) continue;
      for (const call of model.callsWithin(loop)) {
        if (seen.has(call.id) || !model.isDirectForwardCall(call)) continue;
        // Only up to the training loop: an evaluation loop over other data nested in it is not training.
        const inner = enclosingLoops(call);
        const upTo = inner.indexOf(loop);
        if (upTo < 0 || inner.slice(0, upTo).some((other) => model.iteratesOverData(other) && !callsBackward(model, other))) continue;
        seen.add(call.id);
        const reference = forwardReference(call);
        if (!reference) continue;
        result.push({ call, reference, names: modelNames(model, reference) });
      }
    }
    return result.sort((a, b) => a.call.startIndex - b.call.startIndex);
  });
}

/**
 * Whether a loop itself calls backward (model.callsWithin: not in a function defined inside it), asked of the file's
 * calls named `backward` and `manual_backward` in the loop, not of each of its calls.
 */
function callsBackward(model: SemanticModel, loop: Node): boolean {
  const owner = enclosingFunction(loop);
  for (const name of ['backward', 'manual_backward']) {
    for (const call of nodesWithin(model.callsNamed(name), loop)) if (enclosingFunction(call).id === owner.id && model.isBackwardCall(call)) return true;
  }
  return false;
}

// ---------------------------------------------------------------- what a model holds

const PARAMETER_FREE_LAYERS = /^torch\.nn\.(ReLU\d?|LeakyReLU|GELU|SiLU|Mish|ELU|SELU|Sigmoid|Tanh|Softmax\d?d?|LogSoftmax|Softplus|Dropout\d?d?|AlphaDropout|Identity|Flatten|Unflatten|MaxPool\dd|AvgPool\dd|AdaptiveAvgPool\dd|AdaptiveMaxPool\dd|Upsample\w*|PixelShuffle|PixelUnshuffle|ZeroPad\dd|ReflectionPad\dd|ReplicationPad\dd|ConstantPad\dd|CosineSimilarity|PairwiseDistance|\w*Loss)$/;

/** Whether a model expression only ever holds modules without parameters (activations, pooling, transforms, losses). */
export function isParameterFree(model: SemanticModel, reference: Node): boolean {
  const { values, unknown } = possibleValues(model, unwrap(reference));
  if (unknown || values.length === 0) return false;
  return values.every((value) => {
    const node = unwrap(value.node);
    if (node.type === 'lambda') return true;
    if (node.type !== 'call') return false;
    const qualified = model.qualify(node.childForFieldName('function')) ?? '';
    return PARAMETER_FREE_LAYERS.test(qualified) || /(^|\.)transforms(\.|$)/.test(qualified);
  });
}

/** The calls that make what a model expression holds, through wrappers and names (`Net()` for `DDP(Net().cuda())`). */
function constructors(model: SemanticModel, reference: Node, depth = 4): Node[] | undefined {
  const target = unwrap(reference, model);
  if (target.type === 'call') return [target];
  if (depth === 0 || (target.type !== 'identifier' && target.type !== 'attribute')) return undefined;
  const { values, unknown } = possibleValues(model, target);
  if (unknown || values.length === 0) return undefined;
  const calls: Node[] = [];
  for (const value of values) {
    if (value.element || value.index !== undefined) return undefined;
    const inner = constructors(model, value.node, depth - 1);
    if (!inner) return undefined;
    calls.push(...inner);
  }
  return calls;
}

/** The class of this file a model expression is an instance of, if every value it holds is one. */
export function localModelClass(model: SemanticModel, reference: Node): ClassInfo | undefined {
  const classes = new Set<ClassInfo>();
  for (const call of constructors(model, reference) ?? []) {
    const fn = call.childForFieldName('function');
    const cls = fn?.type === 'identifier' ? model.classNamed(fn.text) : undefined;
    if (!cls) return undefined;
    classes.add(cls);
  }
  return classes.size === 1 ? [...classes][0] : undefined;
}

/**
 * The qualified names of the library calls that build a model expression (`transformers.BertForMaskedLM.from_pretrained`),
 * when every value it holds is made by one; undefined when any is a class of this file or unknown.
 */
export function libraryModelQualifiedNames(model: SemanticModel, reference: Node): string[] | undefined {
  const calls = constructors(model, reference);
  if (!calls || calls.length === 0) return undefined;
  const names: string[] = [];
  for (const call of calls) {
    const qualified = model.qualify(call.childForFieldName('function'));
    if (!qualified) return undefined;
    names.push(qualified);
  }
  return names;
}

/**
 * Whether a call makes a module with parameters (or a parameter): a torch.nn layer that has some, `nn.Parameter`, a
 * module class of this file, a pretrained or library model. Tokenizers, configs, optimizers and losses are not.
 */
function makesParameters(model: SemanticModel, call: Node): boolean {
  const fn = call.childForFieldName('function');
  const qualified = model.qualify(fn) ?? '';
  const tail = qualified.split('.').pop() ?? '';
  if (PARAMETER_FREE_LAYERS.test(qualified)) return false;
  if (/^torch\.nn\.(parameter\.)?[A-Z]/.test(qualified)) return true;
  if (fn?.type === 'identifier' && model.classesNamed(fn.text).some((cls) => cls.isModule)) return true;
  if (/(Tokenizer|Processor|FeatureExtractor|Config|Extractor)\w*\.\w+$/.test(qualified)) return false;
  return /from_pretrained|from_config|create_model/.test(tail) || /^(torchvision\.models|timm)\./.test(qualified);
}

/** The submodules and parameters a module class of this file registers in `__init__` (`self.encoder = ...`). */
export function registeredChildren(model: SemanticModel, cls: ClassInfo): string[] {
  const names: string[] = [];
  // The class's own functions (found by position), not every function of the file.
  for (const fn of model.functionsWithin(cls.node)) {
    if (fn.classInfo?.node.id !== cls.node.id || fn.name !== '__init__') continue;
    for (const assignment of model.nodesWithin('assignments', fn.node)) {
      const left = assignment.childForFieldName('left');
      const right = assignment.childForFieldName('right');
      const name = dottedName(left);
      if (!name?.startsWith('self.') || name.split('.').length !== 2 || !right) continue;
      // `self.head = nn.Linear(...)`, or `self.trunk = trunk` where `trunk = resnet50()`: a module or a parameter.
      const made = constructors(model, right) ?? [];
      if (made.some((call) => makesParameters(model, call))) names.push(name.slice('self.'.length));
    }
  }
  return names;
}
