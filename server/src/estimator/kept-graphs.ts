// Forwards whose graphs one backward runs through, where the step runs them in loops before it. A meta-learning
// step (MAML) adapts fast weights with a few inner steps per task and sums the tasks' query losses into one
// backward: every query forward's saved tensors are alive when it starts, and so is every inner step's where its
// gradient was taken with create_graph=True (the fast weights hold that graph), together with the tensors the
// gradient's own backward saved. A first-order inner step (no create_graph, or detached gradients) frees its graph
// at the gradient. The same reading covers a loss accumulated over a loop of forwards before one backward.
//
// Read from the syntax with the program model's values: the names that carry a forward's graph are followed through
// assignments, accumulations (`meta_loss = meta_loss + loss`, `+=`, `append`, fast weights rebuilt from themselves)
// and the returns of the script's own functions, until a backward. `.item()`, `.detach()`, comparisons and the like
// end a graph; `torch.autograd.grad` carries it only with create_graph. An accumulation keeps one graph for each
// run of the loops between its start (`meta_loss = 0.0`) and itself; a name rebound each run keeps the last.
import type { ProgramModel } from '../engine/program/interpreter';
import type { PyNode } from '../engine/program/node';
import { underNoGrad } from '../engine/program/grad-mode';
import { tensorShape, truthy, type Value } from '../engine/program/values';
import type { Located } from './types';
import { treeIndex } from '../engine/program/tree-index';

/** One forward the step runs, as the backward finds it. */
export interface KeptForward {
  /** 0-based line of the call. */
  line: number;
  /** How many of its runs are alive when the backward starts (0: its graph is freed before). */
  kept: number;
  /** The rows its input holds, where the program model sizes it. */
  rows?: Located<number>;
  /** Its loss is differentiated over the fast weights with create_graph=True (a second-order inner step). */
  createGraph: boolean;
  /** Its loss is differentiated over the fast weights without create_graph (a first-order inner step). */
  firstOrder: boolean;
}

export interface KeptGraphs {
  /** The step's forwards, in the order they appear. */
  forwards: KeptForward[];
  /** The `torch.autograd.grad` calls over fast weights (not derivatives with respect to an input). */
  weightGradients: PyNode[];
  /** Some loop's number of runs is not known: counted once. */
  unknownRuns: boolean;
}

/** Calls, attributes and functions whose result has no autograd history (or is not a tensor). */
const GRAPH_ENDING_METHOD = /^(item|detach|detach_|argmax|argmin|cpu|numpy|tolist|size|dim|numel|nelement|data_ptr|requires_grad_)$/;
const GRAPH_ENDING_ATTRIBUTE = /^(data|grad|shape|dtype|device|requires_grad|is_leaf)$/;
const GRAPH_ENDING_FUNCTION = /^(float|int|bool|len|str|round|print|isinstance|math\.\w+)$/;
const AUTOGRAD_GRAD = /(^|\.)autograd\.grad$/;
const FUNCTIONAL_CALL = /(^|\.)functional_call$/;
const INNERLOOP_CONTEXT = /(^|\.)innerloop_ctx$/;
/** Names of the weights a model is given to run with (`params=`, `fast_weights`, `vars=`). */
const WEIGHT_NAME = /(^|_)(params|parameters|weights|vars)$|^fast/i;
const ACCUMULATING_METHOD = /^(append|extend|insert|add_)$/;
/** How deep the script's own functions are followed from the step (a helper that calls a helper). */
const MAX_HELPER_DEPTH = 3;
/** Passes over a function's statements while the names carrying a graph still grow. */
const MAX_FLOW_PASSES = 8;

type Node = PyNode;

function functionOf(node: Node): Node {
  let current = node.parent;
  while (current && current.type !== 'function_definition' && current.type !== 'module') current = current.parent;
  return current ?? node;
}

function within(outer: Node, inner: Node): boolean {
  return inner.startIndex >= outer.startIndex && inner.endIndex <= outer.endIndex;
}

/** Loops of `fn` that repeat `node` (for and while bodies, comprehensions), innermost first. */
function repeatingLoops(node: Node, fn: Node): Node[] {
  const loops: Node[] = [];
  for (let current = node.parent; current && current !== fn; current = current.parent) {
    if (current.type === 'for_statement' || current.type === 'while_statement') {
      const body = current.childForFieldName('body');
      if (body && within(body, node)) loops.push(current);
    } else if (/_comprehension$|^generator_expression$/.test(current.type)) {
      const body = current.childForFieldName('body');
      if (body && within(body, node)) loops.push(current);
    }
  }
  return loops;
}

/** The keyword argument `name` of a call, or its positional argument `index`. */
function argument(call: Node, name: string, index: number): Node | undefined {
  const args = call.childForFieldName('arguments')?.namedChildren.filter((n): n is Node => !!n && n.type !== 'comment') ?? [];
  const keyword = args.find((n) => n.type === 'keyword_argument' && n.childForFieldName('name')?.text === name);
  if (keyword) return keyword.childForFieldName('value') ?? undefined;
  return args.filter((n) => n.type !== 'keyword_argument' && n.type !== 'list_splat' && n.type !== 'dictionary_splat')[index];
}

function calleeText(call: Node): string {
  return call.childForFieldName('function')?.text.replace(/\s+/g, '') ?? '';
}

/** The names a `with higher.innerloop_ctx(model, ...) as (fmodel, diffopt)` binds, with the statement. */
interface InnerLoopContext { statement: Node; model: Node; functional: string; optimizer: string | undefined; tracks: boolean }

export class StepGraphs {
  private readonly contexts: InnerLoopContext[] = [];
  /** Whether a loop the read counted runs a number of times the program model does not know (per read). */
  private unknownRuns = false;

  constructor(private readonly program: ProgramModel, root: Node, private readonly isModel: (value: Value | undefined) => boolean) {
    for (const statement of treeIndex(root).withStatements) {
      if (!statement) continue;
      for (const item of statement.descendantsOfType('with_item')) {
        const value = item?.childForFieldName('value');
        const call = value?.type === 'as_pattern' ? value.namedChildren[0] : undefined;
        const target = value?.type === 'as_pattern' ? value.childForFieldName('alias') ?? value.namedChildren[1] : undefined;
        if (call?.type !== 'call' || !INNERLOOP_CONTEXT.test(calleeText(call))) continue;
        const model = argument(call, 'model', 0);
        const names = target ? identifiersIn(target).map((n) => n.text) : [];
        const tracking = argument(call, 'track_higher_grads', 99);
        if (model && names[0]) {
          this.contexts.push({ statement, model, functional: names[0], optimizer: names[1], tracks: !tracking || tracking.text !== 'False' });
        }
      }
    }
  }

  /**
   * The forwards one backward runs through: those the step runs before it, in the innermost loop around it (or its
   * function), in the script's own functions it calls there too.
   */
  read(backward: Node): KeptGraphs | undefined {
    const fn = functionOf(backward);
    const region = repeatingLoops(backward, fn).find((loop) => loop.type === 'for_statement' || loop.type === 'while_statement') ?? fn;
    const sites: Array<{ call: Node; chain: Node[] }> = [];
    this.unknownRuns = false;
    this.collect(region, backward, [], new Set([fn.id]), sites);
    if (sites.length === 0) return undefined;
    const weightGradients = new Set<Node>();
    const forwards = sites.map(({ call, chain }) => this.follow(call, chain, region, backward, weightGradients));
    return { forwards, weightGradients: [...weightGradients], unknownRuns: this.unknownRuns };
  }

  /**
   * The model's forwards under `scope` that run before `backward` (before it, or in what it is called on), through
   * calls of the script's functions (all of a function's body; `backward` undefined).
   */
  private collect(scope: Node, backward: Node | undefined, chain: Node[], visiting: Set<number>, sites: Array<{ call: Node; chain: Node[] }>): void {
    for (const call of scope.descendantsOfType('call')) {
      if (!call || underNoGrad(call) || call === backward) continue;
      if (backward && call.startIndex >= backward.startIndex && !within(backward, call)) continue;
      if (this.forwardInput(call) !== undefined || this.callsHandedModel(call, chain)) {
        sites.push({ call, chain });
        continue;
      }
      if (chain.length >= MAX_HELPER_DEPTH) continue;
      const callee = this.program.valueOf(call.childForFieldName('function'));
      const definition = callee?.kind === 'function' ? callee.node : undefined;
      if (!definition || visiting.has(definition.id)) continue;
      const body = definition.childForFieldName('body');
      if (!body) continue;
      visiting.add(definition.id);
      this.collect(body, undefined, [...chain, call], visiting, sites);
      visiting.delete(definition.id);
    }
  }

  /**
   * Whether `call` calls a parameter of the function the chain's last call runs, where that call hands it the model
   * or a method bound to it (`rk4_step(model.vector_field, x, dt)` calling `f(x)`); read from the call that runs
   * the function, since the same helper may be handed another function elsewhere (a lambda under no_grad).
   */
  private callsHandedModel(call: Node, chain: readonly Node[]): boolean {
    const fn = call.childForFieldName('function');
    const caller = chain[chain.length - 1];
    if (fn?.type !== 'identifier' || !caller) return false;
    const callee = this.program.valueOf(caller.childForFieldName('function'));
    const definition = functionOf(call);
    if (callee?.kind !== 'function' || callee.node.id !== definition.id) return false;
    const parameters = definition.childForFieldName('parameters')?.namedChildren.filter((n): n is Node => !!n && n.type !== 'comment') ?? [];
    const index = parameters.findIndex((p) => (p.type === 'identifier' ? p : p.childForFieldName('name'))?.text === fn.text);
    // A method's call passes its receiver in place of the first parameter.
    const bound = callee.self !== undefined && callee.binding !== 'static' ? 1 : 0;
    const given = index >= bound ? argument(caller, fn.text, index - bound) : undefined;
    const value = this.program.valueOf(given);
    return this.isModel(value) || (value?.kind === 'function' && value.self !== undefined && this.isModel(value.self));
  }

  /**
   * The input a call of the model takes, where `call` is one (`model(x)`, `model.forward(x)`,
   * `functional_call(model, params, (x,))`, a `higher` functional model), else undefined; null where it takes none.
   */
  forwardInput(call: Node): Node | null | undefined {
    const fn = call.childForFieldName('function');
    if (!fn) return undefined;
    if (FUNCTIONAL_CALL.test(fn.text) && this.isModel(this.program.valueOf(argument(call, 'module', 0)))) {
      const args = argument(call, 'args', 2);
      return (args?.type === 'tuple' || args?.type === 'list' ? args.namedChildren.find((n) => n?.type !== 'comment') : args) ?? null;
    }
    const model = fn.type === 'attribute' && fn.childForFieldName('attribute')?.text === 'forward' ? fn.childForFieldName('object') : fn;
    const functional = fn.type === 'identifier' && this.contexts.some((c) => c.functional === fn.text && within(c.statement, call) && this.isModel(this.program.valueOf(c.model)));
    if (functional || this.isModel(this.program.valueOf(model)) || this.boundMethodOfModel(fn)) return argument(call, 'input', 0) ?? null;
    return undefined;
  }

  /**
   * Whether a name holds a method bound to the model (`rk4_step(model.vector_field, x, dt)` calls it as `f(x)`), or
   * the call names one of the model's own methods that runs its layers (`net.field(s)`, whose body calls
   * `self.body(s)`): each call runs the model's layers as a forward does.
   */
  private boundMethodOfModel(fn: Node): boolean {
    if (fn.type !== 'identifier' && fn.type !== 'attribute') return false;
    const value = this.program.valueOf(fn);
    if (value?.kind !== 'function' || value.self === undefined || !this.isModel(value.self)) return false;
    return fn.type === 'identifier' || runsOwnLayers(value.node);
  }

  /**
   * The arguments that give a forward its weights: functional_call's parameters; a model's argument holding a dict or
   * list of tensors (`model(x, fast_weights)`, `learner(x, vars=fast)`), not another input tensor (`model(t, x)`).
   */
  private weightArguments(call: Node): Node[] {
    const fn = call.childForFieldName('function');
    if (fn && FUNCTIONAL_CALL.test(fn.text)) return [argument(call, 'parameter_and_buffer_dicts', 1)].filter((n): n is Node => !!n);
    return (call.childForFieldName('arguments')?.namedChildren ?? []).filter((n): n is Node => !!n && n.type !== 'comment').slice(1).filter((n) => {
      const given = n.type === 'keyword_argument' ? n.childForFieldName('value') : n;
      const name = n.type === 'keyword_argument' ? n.childForFieldName('name')?.text ?? '' : given?.text ?? '';
      const value = this.program.valueOf(given ?? undefined);
      return WEIGHT_NAME.test(name) || (value !== undefined && ((value.kind === 'list' && !value.tuple) || value.kind === 'dict'));
    });
  }

  /** How many times a loop (or comprehension) runs, where the program model knows what it iterates. */
  private runs(loop: Node): number {
    const value = this.program.valueOf(iterableOf(loop));
    if (value?.kind === 'list') return Math.max(1, value.items.length);
    this.unknownRuns = true;
    return 1;
  }

  /** The rows of the tensor a forward takes, where the program model made it with a shape. */
  private rows(input: Node | null | undefined): Located<number> | undefined {
    let value = this.program.valueOf(input ?? undefined);
    if (value?.kind === 'list') value = value.items[0];
    if (value?.kind === 'tensor') return value.shape[0] !== undefined ? { value: value.shape[0] } : undefined;
    if (value?.kind !== 'call') return undefined;
    const shape = tensorShape(value);
    if (!shape || shape.dims.length < 2) return undefined;
    const sizes = value.kwargs.get('size') ?? (value.args.length === 1 && value.args[0]!.kind === 'list' ? value.args[0] : undefined);
    const first = sizes?.kind === 'list' ? sizes.items[0] : value.path === 'torch.randint' ? undefined : value.args[0];
    const origin = first && 'origin' in first ? first.origin : undefined;
    return { value: shape.dims[0]!, line: origin?.line ?? value.line, how: origin?.how ?? 'literal' };
  }

  /** Whether create_graph is on at a `torch.autograd.grad` call; a value the script does not fix counts as on. */
  private createsGraph(call: Node): boolean {
    const given = argument(call, 'create_graph', 4);
    if (!given) return false;
    const value = this.program.valueOf(given);
    if (value && value.kind !== 'unknown') return truthy(value) !== false;
    return given.text !== 'False';
  }

  /**
   * Per function, or per step loop (all a graph needs to reach the backward in it): the statements a graph can flow
   * through (outside no_grad), and the names the forwards there take as weights.
   */
  private readonly functionFacts = new Map<number, { statements: Node[]; weightNames: Set<string> }>();
  /** Per expression: the names it reads (not attribute or keyword names). */
  private readonly expressionNames = new Map<number, Node[]>();

  private facts(fn: Node, scope: Node): { statements: Node[]; weightNames: Set<string> } {
    let facts = this.functionFacts.get(scope.id);
    if (facts) return facts;
    const statements = scope.descendantsOfType(['expression_statement', 'return_statement']).filter((s): s is Node => !!s && functionOf(s) === fn && !underNoGrad(s));
    const weightNames = new Set<string>();
    for (const call of scope.descendantsOfType('call')) {
      if (call && this.forwardInput(call) !== undefined) for (const w of this.weightArguments(call)) for (const id of identifiersIn(w)) weightNames.add(id.text);
    }
    for (const context of this.contexts) if (within(fn, context.statement)) weightNames.add(context.functional);
    this.functionFacts.set(scope.id, (facts = { statements, weightNames }));
    return facts;
  }

  private names(expression: Node): Node[] {
    let names = this.expressionNames.get(expression.id);
    if (!names) this.expressionNames.set(expression.id, (names = identifiersIn(expression).filter((n) => !isAttributeName(n) && !isKeywordName(n))));
    return names;
  }

  /**
   * Follows one forward's output to the backward: the loops whose runs each keep a graph of it, and whether its
   * loss is differentiated over fast weights on the way.
   */
  private follow(call: Node, chain: readonly Node[], region: Node, backward: Node, weightGradients: Set<Node>): KeptForward {
    // A site is a call of the model, or of a parameter the model was handed through (callsHandedModel).
    const given = this.forwardInput(call);
    const input = given !== undefined ? given : argument(call, 'input', 0) ?? null;
    const rows = this.rows(input);
    // The forward's inputs (every argument but its weights): a gradient over them is a derivative in the loss.
    const weights = new Set(this.weightArguments(call));
    const inputs = (call.childForFieldName('arguments')?.namedChildren ?? []).filter((n): n is Node => !!n && n.type !== 'comment' && !weights.has(n));
    const inputNames = new Set([...(input ? [input] : []), ...(FUNCTIONAL_CALL.test(calleeText(call)) ? [] : inputs)].flatMap((n) => identifiersIn(n).map((id) => id.text)));
    const multiplying = new Set<Node>();
    let createGraph = false;
    let overWeights = false;
    let start: Node = call;
    for (let level = chain.length; level >= 0; level--) {
      const fn = functionOf(start);
      // In the step's own function, only the step's loop: the backward is in it, and a graph that leaves it is
      // started afresh each step (where an accumulation starts is read from the whole function).
      const scope = level === 0 && region.type !== 'function_definition' && region.type !== 'module' ? region : fn;
      const flow = this.flow(start, fn, scope, inputNames);
      for (const grad of flow.gradients) {
        if (!grad.overWeights) continue;
        overWeights = true;
        weightGradients.add(grad.call);
        if (grad.createGraph) createGraph = true;
      }
      // Loops inside the step only: an accumulation started before the step's loop is a leak across steps.
      const inside = (loop: Node): boolean => level > 0 || (region.type !== 'function_definition' && region.type !== 'module' ? within(region.childForFieldName('body') ?? region, loop) : true);
      for (const loop of flow.multiplying) if (inside(loop)) multiplying.add(loop);
      if (level === 0) {
        const reached = flow.reaches(backward);
        // Pieces of one batch (`for part in x.chunk(4)`) hold its rows between them: where a forward's own rows are
        // not known (counted as the batch's), their loop does not multiply them.
        const counted = [...multiplying].filter((loop) => rows !== undefined || !partitionsBatch(loop));
        const kept = reached ? counted.reduce((product, loop) => product * this.runs(loop), 1) : 0;
        return { line: call.startPosition.row, kept, ...(rows ? { rows } : {}), createGraph: createGraph && reached, firstOrder: overWeights && !(createGraph && reached) };
      }
      if (!flow.returned) break;
      start = chain[level - 1]!;
    }
    // Differentiated over the weights and never reaching the backward: an inner step whose graph is freed.
    return { line: call.startPosition.row, kept: 0, ...(rows ? { rows } : {}), createGraph: false, firstOrder: overWeights };
  }

  /**
   * The names in `fn` (its statements under `scope`) that carry the graph of `start` (an expression), the loops whose
   * runs keep one graph each, the gradients taken of it, and whether `fn` returns it.
   */
  private flow(start: Node, fn: Node, scope: Node, inputNames: ReadonlySet<string>) {
    const carrying = new Set<string>();
    const multiplying = new Set<Node>();
    const gradients = new Map<Node, { call: Node; createGraph: boolean; overWeights: boolean }>();
    let returned = false;
    // A comprehension of forwards keeps every one of them (a list of losses, a sum over tasks).
    for (const loop of repeatingLoops(start, fn)) if (loop.type !== 'for_statement' && loop.type !== 'while_statement') multiplying.add(loop);
    const { statements, weightNames } = this.facts(fn, scope);
    /** Accumulations already read (each pass meets them again). */
    const accumulated = new Set<string>();
    /** Whether `expression` holds `start` or a carrying name in a place that keeps its graph. */
    const carries = (expression: Node): boolean => {
      const holdsStart = within(expression, start);
      const names = this.names(expression);
      if (!holdsStart && !names.some((n) => carrying.has(n.text))) return false;
      const mentions = [...(holdsStart ? [start] : []), ...names.filter((n) => carrying.has(n.text))];
      return mentions.some((mention) => this.keepsGraph(mention, expression, gradients, inputNames, weightNames));
    };
    for (let pass = 0; pass < MAX_FLOW_PASSES; pass++) {
      const before = carrying.size;
      for (const statement of statements) {
        if (statement.type === 'return_statement') {
          if (statement.namedChildren[0] && carries(statement)) returned = true;
          continue;
        }
        const expression = statement.namedChildren[0];
        if (!expression) continue;
        const accumulate = (name: string, at: Node): void => {
          carrying.add(name);
          const key = `${at.id}:${name}`;
          if (accumulated.has(key)) return;
          accumulated.add(key);
          const init = initialisation(fn, name, at);
          for (const loop of repeatingLoops(at, fn)) if (!init || !within(loop, init)) multiplying.add(loop);
        };
        if (expression.type === 'assignment' || expression.type === 'augmented_assignment') {
          const right = expression.childForFieldName('right');
          const left = expression.childForFieldName('left');
          if (!right || !left || !carries(right)) continue;
          for (const name of boundNames(left)) {
            const rebuilt = expression.type === 'augmented_assignment' || identifiersIn(right).some((n) => n.text === name && !isAttributeName(n));
            if (rebuilt) accumulate(name, statement);
            else carrying.add(name);
          }
        } else if (expression.type === 'call') {
          const fnNode = expression.childForFieldName('function');
          const method = fnNode?.type === 'attribute' ? fnNode.childForFieldName('attribute')?.text ?? '' : '';
          const receiver = fnNode?.type === 'attribute' ? fnNode.childForFieldName('object') : undefined;
          const args = expression.childForFieldName('arguments');
          if (!args || !carries(args)) continue;
          // `kept.append(loss)`: the list keeps every run's graph.
          if (ACCUMULATING_METHOD.test(method) && receiver?.type === 'identifier') accumulate(receiver.text, statement);
          // higher's `diffopt.step(loss)`: the functional model's weights take the step, with its graph while tracked.
          const context = this.contexts.find((c) => method === 'step' && receiver?.text === c.optimizer && within(c.statement, statement));
          if (context) {
            gradients.set(expression, { call: expression, createGraph: context.tracks, overWeights: true });
            if (context.tracks) accumulate(context.functional, statement);
          }
        }
      }
      if (carrying.size === before) break;
    }
    return {
      returned, multiplying, gradients: [...gradients.values()],
      // `loss.backward()`, `(loss / n).backward()`, `scaler.scale(loss).backward()`; `torch.autograd.backward(loss)`.
      reaches: (backward: Node): boolean => {
        const given = /(^|\.)autograd\.backward$/.test(calleeText(backward)) ? argument(backward, 'tensors', 0)
          : backward.childForFieldName('function')?.childForFieldName('object');
        return !!given && carries(given);
      },
    };
  }

  /**
   * Whether `mention` keeps its graph up to `root`: no `.item()`, `.detach()`, comparison or plain-number function
   * on the way; a `torch.autograd.grad` on the way keeps it only with create_graph (and is recorded).
   */
  private keepsGraph(mention: Node, root: Node, gradients: Map<Node, { call: Node; createGraph: boolean; overWeights: boolean }>,
    inputNames: ReadonlySet<string>, weightNames: ReadonlySet<string>): boolean {
    let node = mention;
    for (let parent = node.parent; node !== root && parent; node = parent, parent = node.parent) {
      // What a comprehension iterates carries its graph only through the names bound from it that its elements
      // keep (`w - lr * g for w, g in zip(weights, grads)` does, `g.detach()` does not).
      if (parent.type === 'for_in_clause' && parent.childForFieldName('right') === node) {
        const comprehension = parent.parent;
        const body = comprehension?.childForFieldName('body');
        const left = parent.childForFieldName('left');
        if (!comprehension || !body || !left) return false;
        const bound = new Set(identifiersIn(zippedTarget(node, left, mention) ?? left).map((n) => n.text));
        const kept = identifiersIn(body).some((n) => bound.has(n.text) && !isAttributeName(n) && this.keepsGraph(n, body, gradients, inputNames, weightNames));
        if (!kept || comprehension === root) return kept;
        // Climbs on from the comprehension itself.
        parent = comprehension;
        continue;
      }
      if (/^(comparison_operator|boolean_operator|not_operator)$/.test(parent.type)) return false;
      if (parent.type === 'attribute' && parent.childForFieldName('object') === node) {
        const name = parent.childForFieldName('attribute')?.text ?? '';
        if (GRAPH_ENDING_ATTRIBUTE.test(name)) return false;
        if (GRAPH_ENDING_METHOD.test(name) && parent.parent?.type === 'call' && parent.parent.childForFieldName('function') === parent) return false;
      }
      if (parent.type === 'argument_list' && parent.parent?.type === 'call') {
        const call = parent.parent;
        const callee = calleeText(call);
        if (GRAPH_ENDING_FUNCTION.test(callee)) return false;
        if (AUTOGRAD_GRAD.test(callee)) {
          const outputs = argument(call, 'outputs', 0);
          if (!outputs || !within(outputs, mention)) return false;
          const inputs = argument(call, 'inputs', 1);
          // Over the weights a forward runs with (or the parameters), not over its input (a derivative in the loss).
          const ids = inputs ? identifiersIn(inputs).map((n) => n.text) : [];
          const overWeights = !!inputs && (/\bparameters\(/.test(inputs.text) || ids.some((id) => weightNames.has(id))) && !ids.some((id) => inputNames.has(id));
          const createGraph = this.createsGraph(call);
          gradients.set(call, { call, createGraph, overWeights });
          if (!createGraph) return false;
        }
      }
      if (parent.type === 'call' && parent.childForFieldName('function') === node) {
        // A call of a carrying name (a functional model whose weights took a step) makes a tensor with its graph.
        continue;
      }
    }
    return true;
  }
}

/** The identifiers in `node`, itself included (the engine's plain tree leaves a node out of its own descendants). */
function identifiersIn(node: Node): Node[] {
  if (node.type === 'identifier') return [node];
  return node.descendantsOfType('identifier').filter((n): n is Node => !!n);
}

/** What a for loop or a comprehension iterates (undefined for a while loop). */
function iterableOf(loop: Node): Node | undefined {
  const clause = loop.type === 'for_statement' ? loop : loop.namedChildren.find((child) => child?.type === 'for_in_clause');
  return clause?.childForFieldName('right') ?? undefined;
}

/** Whether a loop (or comprehension) iterates the pieces of a tensor (`x.chunk(4)`, `torch.split(x, 16)`). */
function partitionsBatch(loop: Node): boolean {
  const iterable = iterableOf(loop);
  return iterable?.type === 'call' && /(^|\.)(chunk|split|tensor_split|unbind)$/.test(calleeText(iterable));
}

/**
 * The target a `zip(a, b)` iterated by a comprehension binds from the argument that holds `mention` (`g` of
 * `(name, w), g in zip(fast.items(), grads)` for grads); undefined where the iterable is no such zip.
 */
function zippedTarget(iterable: Node, left: Node, mention: Node): Node | undefined {
  if (iterable.type !== 'call' || iterable.childForFieldName('function')?.text !== 'zip') return undefined;
  const zipped = iterable.childForFieldName('arguments')?.namedChildren.filter((n): n is Node => !!n && n.type !== 'comment') ?? [];
  const targets = /^(pattern_list|tuple_pattern|list_pattern)$/.test(left.type) ? left.namedChildren.filter((n): n is Node => !!n) : [];
  const index = zipped.findIndex((argument) => within(argument, mention));
  return targets.length === zipped.length && index >= 0 ? targets[index] : undefined;
}

function isAttributeName(node: Node): boolean {
  return node.parent?.type === 'attribute' && node.parent.childForFieldName('attribute') === node;
}

function isKeywordName(node: Node): boolean {
  return node.parent?.type === 'keyword_argument' && node.parent.childForFieldName('name') === node;
}

/** The names an assignment's left side binds (`a`, `a, b`, `fast[name]`, `self.cache`: its base name). */
function boundNames(left: Node): string[] {
  if (left.type === 'identifier') return [left.text];
  if (left.type === 'subscript' || left.type === 'attribute') {
    const base = left.childForFieldName(left.type === 'subscript' ? 'value' : 'object');
    return base ? boundNames(base) : [];
  }
  if (/^(pattern_list|tuple_pattern|list_pattern|tuple|list)$/.test(left.type)) return left.namedChildren.flatMap((child) => (child ? boundNames(child) : []));
  return [];
}

/**
 * Where `name` last starts afresh in `fn` before `at` (`meta_loss = 0.0`, `fast = dict(params)`: an assignment that
 * does not read it, a `with ... as` or `for` that binds it); undefined where `fn` never does (a parameter).
 */
function initialisation(fn: Node, name: string, at: Node): Node | undefined {
  let found: Node | undefined;
  for (const assignment of fn.descendantsOfType('assignment')) {
    if (!assignment || assignment.startIndex >= at.startIndex || functionOf(assignment) !== fn) continue;
    const left = assignment.childForFieldName('left');
    const right = assignment.childForFieldName('right');
    if (!left || !right || !boundNames(left).includes(name)) continue;
    if (identifiersIn(right).some((n) => n.text === name && !isAttributeName(n))) continue;
    found = assignment;
  }
  for (const statement of fn.descendantsOfType(['with_statement', 'for_statement'])) {
    if (!statement || statement.startIndex >= at.startIndex || !within(statement, at) || functionOf(statement) !== fn) continue;
    const binds = statement.type === 'for_statement' ? statement.childForFieldName('left') : statement.descendantsOfType('as_pattern')[0];
    if (binds && identifiersIn(binds).some((n) => n.text === name) && (!found || statement.startIndex > found.startIndex)) found = statement;
  }
  return found;
}

/**
 * Whether a method's body calls the module itself or one of its attributes that is not a method of its class
 * (`self(x)`, `self.body(s)`: a layer), as a forward does; not a method that only sets state or calls other methods.
 */
function runsOwnLayers(method: Node): boolean {
  const classBody = method.parent?.type === 'decorated_definition' ? method.parent.parent : method.parent;
  const methods = new Set((classBody?.namedChildren ?? []).map((child) => (child?.type === 'decorated_definition' ? child.childForFieldName('definition') : child))
    .filter((child): child is Node => child?.type === 'function_definition').map((child) => child.childForFieldName('name')?.text));
  return method.descendantsOfType('call').some((call) => {
    const fn = call?.childForFieldName('function');
    if (fn?.type === 'identifier') return fn.text === 'self';
    return fn?.type === 'attribute' && fn.childForFieldName('object')?.text === 'self' && !methods.has(fn.childForFieldName('attribute')?.text);
  });
}

/** Whether the forwards are more than one forward each before the backward (which the plain reading counts). */
export function keepsGraphsOfLoops(graphs: KeptGraphs): boolean {
  return graphs.forwards.some((forward) => forward.kept > 1 || forward.createGraph);
}

/**
 * What the step keeps when its backward starts, in units of `batch` rows (a forward whose rows are not known is
 * counted at `batch`): all the kept forwards' rows, those of second-order inner steps, the largest single forward's,
 * and the fast weights the kept graphs hold (one copy of the weights per kept inner step, or per kept forward run on
 * first-order fast weights).
 */
export function keptRows(graphs: KeptGraphs, batch: number): { rows: number; createGraphRows: number; largestRows: number; weightCopies: number } {
  const rowsOf = (forward: KeptForward): number => (forward.rows?.value ?? batch) / batch;
  const kept = graphs.forwards.filter((forward) => forward.kept > 0);
  const firstOrder = graphs.forwards.some((forward) => forward.firstOrder);
  return {
    rows: kept.reduce((sum, forward) => sum + forward.kept * rowsOf(forward), 0),
    createGraphRows: kept.filter((forward) => forward.createGraph).reduce((sum, forward) => sum + forward.kept * rowsOf(forward), 0),
    largestRows: Math.max(...graphs.forwards.map(rowsOf)),
    weightCopies: kept.filter((forward) => forward.createGraph || (firstOrder && !forward.firstOrder)).reduce((sum, forward) => sum + forward.kept, 0),
  };
}
