// OOM102: `total += loss` (or `total = total + loss`) across iterations, where the right side carries a graph.
import type { Node } from '../engine/parser';
import { iterationLoop, outlivesIteration } from '../engine/semantic/lifetime';
import type { SemanticModel } from '../engine/semantic/model';
import { callArguments, callReceiver, children, dottedName } from '../engine/syntax';
import { t } from '../l10n';
import { KeptValue, keepInsteadAdvice, keepValueFixes } from './tensor-appended-to-list';
import { ruleCode } from './codes';
import type { Rule, RuleReport } from './rule';

/** Whether `name` feeds a backward later in the same iteration (`loss = loss + aux; loss.backward()`). */
function backpropagatedInIteration(model: SemanticModel, site: Node, name: string): boolean {
  const region = iterationLoop(model, site) ?? model.functionOf(site)?.node;
  if (!region) return false;
  for (const call of model.callsWithin(region)) {
    if (call.startIndex <= site.startIndex || !model.isBackwardCall(call)) continue;
    const receiver = callReceiver(call);
    const inputs = [receiver, ...callArguments(call).positional].filter((node): node is Node => !!node);
    const mentions = inputs.some((input) =>
      input.descendantsOfType(['identifier', 'attribute']).some((node) => !!node && dottedName(node) === name) || dottedName(input) === name,
    );
    if (mentions) return true;
  }
  return false;
}

function accumulationMessage(target: string, kept: KeptValue): string {
  const value = kept.node;
  const text = value.text.length <= 40 ? value.text : `${value.text.slice(0, 37)}...`;
  return t("'{0} += {1}' keeps the autograd history of every iteration alive as long as '{0}' lives, so it grows with every step. {2}", target, text, keepInsteadAdvice(kept, 'Add'));
}

export const tensorAccumulatedByAdd: Rule = {
  ...ruleCode('OOM102'),
  code: 'OOM102',
  check({ model, inRegion, regionNodes }) {
    const reports: RuleReport[] = [];
    const consider = (site: Node, target: Node, value: Node) => {
      const name = dottedName(target) ?? (target.type === 'subscript' ? target.text : undefined);
      if (!name) return;
      if (!model.isAttached(value) || model.isNoGrad(site)) return;
      if (!outlivesIteration(model, site, target)) return;
      if (backpropagatedInIteration(model, site, name)) return;
      const kept = new KeptValue(model, value, site, target);
      reports.push({ node: site, message: accumulationMessage(target.text, kept), fixes: keepValueFixes(kept, 'Add') });
    };
    for (const augmented of regionNodes('augmentedAssignments')) {
      const left = augmented.childForFieldName('left');
      const right = augmented.childForFieldName('right');
      if (!inRegion(augmented) || augmented.childForFieldName('operator')?.text !== '+=' || !left || !right) continue;
      // `outs += [logits]` is a list append (OOM101).
      if (right.type === 'list' || right.type === 'tuple') continue;
      consider(augmented, left, right);
    }
    for (const assignment of regionNodes('assignments')) {
      const left = assignment.childForFieldName('left');
      const right = assignment.childForFieldName('right');
      if (!inRegion(assignment) || !left || right?.type !== 'binary_operator' || right.childForFieldName('operator')?.text !== '+') continue;
      const target = dottedName(left);
      if (!target) continue;
      const [a, b] = [right.childForFieldName('left'), right.childForFieldName('right')];
      const other = dottedName(a) === target ? b : dottedName(b) === target ? a : undefined;
      if (other && children(right).length >= 2) consider(assignment, left, other);
    }
    return reports;
  },
};
