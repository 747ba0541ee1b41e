// OOM107: .backward(retain_graph=True) inside a training loop, where each iteration's graph stays alive.
import type { Node } from '../engine/parser';
import type { SemanticModel } from '../engine/semantic/model';
import { DETACHING_METHODS } from '../engine/semantic/names';
import { contains, dottedName, enclosingFunction, enclosingLoops } from '../engine/syntax';
import { t } from '../l10n';
import { ruleCode } from './codes';
import type { Rule, RuleReport } from './rule';

/**
 * The names and attribute chains an expression reads as values, leaving out callee names (`criterion` in
 * `criterion(out, y)`) and whatever a detaching method cuts off (`fake.detach()`).
 */
function valueReferences(node: Node, out: Node[] = []): Node[] {
  if (node.type === 'identifier' || node.type === 'attribute') {
    out.push(node);
    if (node.type === 'attribute') valueReferences(node.childForFieldName('object')!, out);
    return out;
  }
  if (node.type === 'call') {
    const fn = node.childForFieldName('function');
    if (fn?.type === 'attribute') {
      if (DETACHING_METHODS.has(fn.childForFieldName('attribute')?.text ?? '')) return out;
      // `out.mean()`: the receiver is a value; `self.model(x)` / `F.mse_loss(a, b)` only pass their arguments.
      const receiver = fn.childForFieldName('object');
      if (receiver && receiver.type !== 'identifier') valueReferences(receiver, out);
      else if (receiver) out.push(receiver);
    }
    const args = node.childForFieldName('arguments');
    if (args) for (const arg of args.namedChildren) valueReferences(arg.type === 'keyword_argument' ? arg.childForFieldName('value') ?? arg : arg, out);
    return out;
  }
  for (const child of node.namedChildren) valueReferences(child, out);
  return out;
}

type Definitions = ReturnType<SemanticModel['reachingDefinitions']>;

/** Definitions of `reference` that reach it and were made inside `scope` (this iteration, or this helper call). */
function definitionsInside(model: SemanticModel, reference: Node, scope: Node): Definitions {
  const name = dottedName(reference);
  if (!name) return [];
  return model.reachingDefinitions(name, reference).filter((definition) => definition.kind !== 'param' && contains(scope, definition.site) && definition.site.startIndex < reference.startIndex);
}

/**
 * The graph a backward (or `torch.autograd.grad`) runs through, as the graph-attached values it was computed from
 * inside `scope` and the assignments that made them, followed back through assignments made in `scope`. Two
 * backwards share a graph when these sets meet: both GAN losses computed from `fake`, or two heads unpacked from one
 * forward (`seg, depth = model(x)`). Undefined when the subject was not built inside `scope` at all.
 */
function graphInputs(model: SemanticModel, call: Node, scope: Node): Set<string> | undefined {
  const subject = model.backwardSubject(call);
  if (!subject) return undefined;
  const inputs = new Set<string>();
  let builtInside = subject.type !== 'identifier' && subject.type !== 'attribute';
  const pending = [subject];
  const seen = new Set<number>();
  while (pending.length > 0) {
    const expression = pending.pop()!;
    if (seen.has(expression.id)) continue;
    seen.add(expression.id);
    for (const reference of valueReferences(expression)) {
      const name = dottedName(reference);
      if (!name || !model.isAttached(reference)) continue;
      inputs.add(name);
      for (const definition of definitionsInside(model, reference, scope)) {
        builtInside = true;
        // Values unpacked from one call (`seg, depth = model(x)`) share that call's graph.
        if (definition.value) inputs.add(`@${definition.value.id}`);
        if (definition.value) pending.push(definition.value);
        else if (definition.site.type === 'augmented_assignment') pending.push(definition.site.childForFieldName('right')!);
      }
    }
  }
  return builtInside ? inputs : undefined;
}

function sharesGraph(a: Set<string>, b: Set<string>): boolean {
  for (const name of a) if (b.has(name)) return true;
  return false;
}

/**
 * Where each call of the backward builds a fresh graph: the innermost loop around it, or, for a per-batch helper
 * without a loop of its own (`def train_step(batch): ... loss.backward(retain_graph=True)`), the helper's body
 * when some loop calls it once per batch.
 */
function iterationScope(model: SemanticModel, call: Node): Node | undefined {
  const loop = enclosingLoops(call)[0];
  if (loop) return loop;
  const fn = enclosingFunction(call);
  if (fn.type !== 'function_definition') return undefined;
  const info = model.functionInfo(fn);
  if (!info) return undefined;
  const calledPerBatch = model.callersOf(info).some((caller) => {
    const callerLoop = enclosingLoops(caller)[0];
    return !!callerLoop && model.isPerBatchLoop(callerLoop);
  });
  return calledPerBatch ? fn : undefined;
}

export const retainGraphInLoop: Rule = {
  ...ruleCode('OOM107'),
  code: 'OOM107',
  check({ model, region, spells }) {
    const reports: RuleReport[] = [];
    // The query cannot match a file that never writes the keyword; a substring test is far cheaper than a walk.
    if (!spells('retain_graph')) return reports;
    for (const match of model.queryMatches('retain-graph-in-loop', region)) {
      const call = match.get('call');
      if (!call) continue;
      const scope = iterationScope(model, call);
      // Not in a loop, nor in a helper that a batch loop calls.
      if (!scope) continue;
      const inputs = graphInputs(model, call, scope);
      // The graph was built before the loop (`for _ in range(3): loss.backward(retain_graph=True)`): retaining it is
      // the point, and nothing new piles up per iteration.
      if (!inputs) continue;
      // A second backward later in the iteration through the same graph is what retain_graph is for, and so is a
      // torch.autograd.grad through it (a gradient penalty, a gradient-norm statistic).
      const secondBackward = model.callsWithin(scope).some((other) => {
        if (other.startIndex <= call.endIndex || !(model.isBackwardCall(other) || model.isAutogradGradCall(other))) return false;
        const otherInputs = graphInputs(model, other, scope);
        return !!otherInputs && sharesGraph(inputs, otherInputs);
      });
      if (secondBackward) continue;
      reports.push({
        node: call,
        message: t('backward(retain_graph=True) in a loop keeps this iteration\'s graph and its saved activations alive after backward; if anything carries over to the next iteration (a hidden state, a running loss), the graphs chain up step after step. Drop retain_graph=True, and detach() what is carried over.'),
      });
    }
    return reports;
  },
};
