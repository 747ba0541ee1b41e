// How long a container or accumulator lives compared with one iteration of a batch loop: the question behind
// OOM101 and OOM102. A value kept in something that outlives the iteration keeps its autograd graph alive.
import type { Node } from '../parser';
import { callReceiver, children, contains, dottedName, enclosingFunction, innermostLoop, nodesWithin, spelledWhenCounted } from '../syntax';
import type { SemanticModel } from './model';
import { NodeMemo } from '../node-memo';

/** `history["loss"]` → `history`; `self.outs` → `self.outs`; `x` → `x`. */
export function containerBase(node: Node): Node {
  let current = node;
  while (current.type === 'subscript') current = current.childForFieldName('value') ?? current;
  return current;
}

export interface IterationScope {
  /** The batch loop whose iterations the value should not outlive, if the site is in a loop. */
  loop?: Node;
}

/** The loop whose iteration matters: the innermost enclosing batch loop, else the innermost loop. */
export function iterationLoop(model: SemanticModel, site: Node): Node | undefined {
  const innermost = innermostLoop(site);
  return innermost && iterationLoopFrom(model, innermost);
}

/**
 * The iteration loop of whatever lies in the body of `innermost`: the loops around such a site are `innermost` and
 * the loops around it, so the answer is kept per loop. A long loop has a site per line, and each one walked its
 * loops again, twice per finding.
 */
function iterationLoopFrom(model: SemanticModel, innermost: Node): Node {
  return model.memoFor('iteration-loop', innermost.id, () => {
    if (model.isBatchLoop(innermost)) return innermost;
    for (let loop = innermostLoop(innermost); loop; loop = innermostLoop(loop)) if (model.isBatchLoop(loop)) return loop;
    return innermost;
  });
}

/** Whether `name` is (re)bound inside `region` (assignment or loop target), other than by `site` itself. */
function assignedWithin(model: SemanticModel, name: string, region: Node, site?: Node): boolean {
  const bindings = bindingsWithin(model, region).get(name);
  return !!bindings && bindings.some((binding) => !(site && binding.byAssignment && binding.id === site.id));
}

interface RegionBinding {
  /** The assignment's or the loop's id. */
  id: number;
  byAssignment: boolean;
}

/**
 * The names that assignments and for-loop targets inside `region` bind (the region's own loop target aside), read
 * once per region: every site in a loop asks about its container, and a scan per site would grow with the loop.
 */
function bindingsWithin(model: SemanticModel, region: Node): Map<string, RegionBinding[]> {
  return model.memoFor('bindings-within', region.id, () => {
    const bindings = new Map<string, RegionBinding[]>();
    const add = (names: readonly string[], binding: RegionBinding) => {
      for (const name of names) {
        const list = bindings.get(name);
        if (list) list.push(binding);
        else bindings.set(name, [binding]);
      }
    };
    // Both lists are in document order: only the run inside the region is read.
    for (const assignment of model.nodesWithin('assignments', region)) {
      if (!contains(region, assignment)) continue;
      const left = assignment.childForFieldName('left');
      if (left) add(model.targetNames(left), { id: assignment.id, byAssignment: true });
    }
    for (const loop of model.nodesWithin('loops', region)) {
      if (loop.type !== 'for_statement' || !contains(region, loop) || loop.id === region.id) continue;
      const left = loop.childForFieldName('left');
      if (left) add(model.targetNames(left), { id: loop.id, byAssignment: false });
    }
    return bindings;
  });
}

/** Whether `name` is a local of the function holding `site` (assigned there and not declared global). */
function isFunctionLocal(model: SemanticModel, name: string, site: Node): boolean {
  if (name.includes('.')) return false;
  const fn = enclosingFunction(site);
  if (fn.type !== 'function_definition') return false;
  return assignedWithin(model, name, fn);
}

/** Whether `name` is a parameter of the function holding `site`. */
function isParameter(name: string, site: Node): boolean {
  const fn = enclosingFunction(site);
  const parameters = fn.type === 'function_definition' ? fn.childForFieldName('parameters') : null;
  return !!parameters?.descendantsOfType('identifier').some((identifier) => identifier.text === name);
}

/** Methods a framework calls once per batch: Lightning's training_step, Hugging Face Trainer's compute_loss. */
const FRAMEWORK_BATCH_HOOKS = new Set(['training_step', 'compute_loss', 'on_train_batch_end', 'on_before_backward', 'on_after_backward']);

/**
 * Whether a container or accumulator named by `target` outlives one iteration of the batch loop around `site`
 * (or, outside any loop, one call of a function that runs once per batch).
 */
export function outlivesIteration(model: SemanticModel, site: Node, target: Node): boolean {
  const base = containerBase(target);
  const name = dottedName(base);
  if (!name) return false;
  const loop = iterationLoop(model, site);
  if (loop) {
    // Created inside the iteration: rebuilt every time, so it dies with the iteration.
    if (assignedWithin(model, name, loop, site)) return false;
    // A helper's local list over layers or decoding steps is consumed in the same call (U-Net skips, torch.cat).
    // A list the caller passed in (`forward(self, x, concat_list)`) is the caller's to consume, likewise.
    if (!model.isBatchLoop(loop) && (isFunctionLocal(model, name, site) || isParameter(name, site))) return false;
    return !isClearedAfterBackward(model, name);
  }
  const fn = model.functionOf(site);
  if (!fn) return false;
  // Lightning calls training_step once per batch; a local function called from a loop runs once per iteration.
  const perBatch = (!!fn.classInfo && FRAMEWORK_BATCH_HOOKS.has(fn.name)) || model.callersOf(fn).some((caller) => innermostLoop(caller) !== undefined);
  if (!perBatch) return false;
  // Outside a loop, only what outlives the call can pile up: attributes and names not local to the function.
  if (isFunctionLocal(model, name, site)) return false;
  if (!name.includes('.') && !isGlobalIn(model, name, fn.node)) return false;
  return !isClearedAfterBackward(model, name);
}

function isGlobalIn(model: SemanticModel, name: string, fn: Node): boolean {
  for (const statement of fn.descendantsOfType('global_statement')) {
    if (statement && children(statement).some((child) => child.text === name)) return true;
  }
  // A module-level name that the function only reads and mutates.
  return moduleAssignedNames(model).has(name);
}

/** The names that module-level assignments bind (memoised per document version). */
function moduleAssignedNames(model: SemanticModel): Set<string> {
  return model.memo('module-assigned-names', () => {
    const names = new Set<string>();
    for (const assignment of model.assignments) {
      if (enclosingFunction(assignment).type !== 'module') continue;
      const left = assignment.childForFieldName('left');
      if (left) for (const name of model.targetNames(left)) names.add(name);
    }
    return names;
  });
}

/**
 * REINFORCE's pattern: a buffer that a function reads into a loss, backpropagates, then clears
 * (`del policy.saved_log_probs[:]`). The graphs it held are freed every episode.
 */
export function isClearedAfterBackward(model: SemanticModel, name: string): boolean {
  const last = name.slice(name.lastIndexOf('.') + 1);
  // One table per model, by name: a key made per question (`cleared-after-backward:losses`) was a new string to hash
  // for every site of a long loop.
  const byName = model.memo('cleared-after-backward', () => new Map<string, boolean>());
  let answer = byName.get(last);
  if (answer === undefined) byName.set(last, (answer = computeClearedAfterBackward(model, last)));
  return answer;
}

/**
 * Whether some reset of the name frees graphs. A reset spells the name, so only the top-level statements that spell it
 * are read (the model counts a word once over the text and notes which statements hold it): an index of every name's
 * resets over the whole file was a seventh of OOM101's profiled time on the bench's corpus, for the one or two names
 * it asks.
 */
function computeClearedAfterBackward(model: SemanticModel, last: string): boolean {
  if (!model.spells(last)) return false;
  for (const statement of model.root.children) {
    if (!spelledWhenCounted(statement, last)) continue;
    if (clearSitesOfStatementByName(model, statement).get(last)?.some((site) => clearFreesGraphs(model, site))) return true;
  }
  return false;
}

const clearSitesByNameCache = new NodeMemo<Map<string, ClearSite[]>>();

function clearSitesOfStatementByName(model: SemanticModel, statement: Node): Map<string, ClearSite[]> {
  let byName = clearSitesByNameCache.get(statement);
  if (!byName) {
    byName = new Map();
    for (const site of clearSitesOfStatement(model, statement)) {
      const list = byName.get(site.last);
      if (list) list.push(site);
      else byName.set(site.last, [site]);
    }
    clearSitesByNameCache.set(statement, byName);
  }
  return byName;
}

export interface ClearSite {
  site: Node;
  /** The last name of the container that is reset (`saved_log_probs` for `del policy.saved_log_probs[:]`). */
  last: string;
}

/** Whether an identifier is (the last name of) the target an assignment binds: `xs` in `xs = []`, `self.xs = []`. */
function isAssignedName(node: Node): boolean {
  let target: Node = node;
  if (target.parent?.type === 'attribute' && target.parent.childForFieldName('attribute')?.id === target.id) target = target.parent;
  const parent = target.parent;
  return parent?.type === 'assignment' && parent.childForFieldName('left')?.id === target.id;
}

function containerLastName(node: Node | null | undefined): string | undefined {
  const name = dottedName(node ? containerBase(node) : node);
  return name?.slice(name.lastIndexOf('.') + 1);
}

const clearSitesCache = new NodeMemo<ClearSite[]>();

/** The resets of one top-level statement (`del xs[:]`, `xs.clear()`, `xs = []`), cached on it (they depend on its text alone). */
function clearSitesOfStatement(model: SemanticModel, statement: Node): ClearSite[] {
  let sites = clearSitesCache.get(statement);
  if (!sites) {
    sites = clearSitesWithin(model, statement);
    clearSitesCache.set(statement, sites);
  }
  return sites;
}

/** The resets inside `region` (a statement, or the whole module). */
export function clearSitesWithin(model: SemanticModel, region: Node): ClearSite[] {
  const inside = (node: Node) => contains(region, node);
  const sites: ClearSite[] = [];
  // Each list is in document order: only the run inside the region is read.
  for (const statement of model.nodesWithin('deleteStatements', region)) {
    if (!inside(statement)) continue;
    // `del xs[:]`, `del a, b`; `del xs[50:]` only trims the list to a bounded length, which clears nothing.
    for (const target of children(statement).flatMap((node) => [node, ...children(node)])) {
      if (isTrim(target)) continue;
      const last = containerLastName(target);
      if (last) sites.push({ site: statement, last });
    }
  }
  const clears = model.callsNamed('clear');
  for (const call of nodesWithin(clears, region)) {
    const last = inside(call) ? containerLastName(callReceiver(call)) : undefined;
    if (last) sites.push({ site: call, last });
  }
  for (const assignment of model.nodesWithin('assignments', region)) {
    // The value first: most assignments bind something other than an empty list or a call, and then their
    // target's name need not be spelled out.
    const right = assignment.childForFieldName('right');
    if ((right?.type !== 'list' && right?.type !== 'call') || children(right).length > 1) continue;
    const last = containerLastName(assignment.childForFieldName('left'));
    if (last) sites.push({ site: assignment, last });
  }
  return sites;
}

/** `xs[50:]`, `xs[:-50]`: a slice with bounds (deleting it keeps the other elements); `xs[:]` and `xs[0:]` clear all. */
function isTrim(target: Node): boolean {
  if (target.type !== 'subscript') return false;
  const slice = target.childForFieldName('subscript');
  if (slice?.type !== 'slice') return false;
  const bounds = slice.children;
  const colon = bounds.findIndex((child) => child.type === ':');
  return bounds.some((child, i) => child.isNamed && child.type !== 'comment' && !(i < colon && child.type === 'integer' && child.text === '0'));
}

/** Whether a reset follows a backward in the same function that read the container first (REINFORCE). */
export function clearFreesGraphs(model: SemanticModel, { site, last }: ClearSite): boolean {
  const fn = enclosingFunction(site);
  if (fn.type !== 'function_definition') return computeClearFreesGraphs(model, fn, site, last);
  // Inside a function the answer reads that function alone, which is unchanged while the site's node is (a
  // statement moved unchanged into a new version keeps its nodes): it is kept per site.
  let answers = clearFreesCache.get(site);
  if (!answers) clearFreesCache.set(site, (answers = new Map()));
  let answer = answers.get(last);
  if (answer === undefined) answers.set(last, (answer = computeClearFreesGraphs(model, fn, site, last)));
  return answer;
}

const clearFreesCache = new NodeMemo<Map<string, boolean>>();

function computeClearFreesGraphs(model: SemanticModel, fn: Node, site: Node, last: string): boolean {
  const backward = model.callsWithin(fn).find((call) => call.startIndex < site.startIndex && model.isBackwardCall(call));
  if (!backward) return false;
  // The buffer must feed the loss: some read of it comes before the backward (creating it empty reads nothing).
  const read = (node: Node) => node.text === last && node.startIndex < backward.startIndex && !isAssignedName(node);
  if (fn.type !== 'module') return fn.descendantsOfType('identifier').some(read);
  // At module level, only the top-level statements before the backward that hold the name are walked.
  for (const statement of fn.children) {
    if (statement.startIndex >= backward.startIndex) break;
    if (!identifierNames(statement).has(last)) continue;
    if ((statement.type === 'identifier' && read(statement)) || statement.descendantsOfType('identifier').some(read)) return true;
  }
  return false;
}

const identifierNamesCache = new NodeMemo<Set<string>>();

/** The names of the identifiers in a top-level statement (itself included), cached: unchanged statements move between versions. */
export function identifierNames(statement: Node): Set<string> {
  let names = identifierNamesCache.get(statement);
  if (!names) {
    names = new Set(statement.descendantsOfType('identifier').map((identifier) => identifier.text));
    if (statement.type === 'identifier') names.add(statement.text);
    identifierNamesCache.set(statement, names);
  }
  return names;
}
