// OOM103: a training loop that calls backward and steps an optimizer but never clears gradients.
import type { Node } from '../engine/parser';
import { callArguments, calleeName, callReceiver, enclosingLoops } from '../engine/syntax';
import type { SemanticModel } from '../engine/semantic/model';
import { insertAt, lineEnding, lineIndent } from '../fixes/edits';
import type { Fix } from '../engine/types';
import { t } from '../l10n';
import { ruleCode } from './codes';
import type { Rule, RuleReport } from './rule';
import type { TextLike } from '../engine/piece-text';

/** The optimizer a step call steps: `opt` in `opt.step()` and in `scaler.step(opt)`. */
function steppedOptimizer(model: SemanticModel, step: Node): Node | undefined {
  const receiver = callReceiver(step);
  return receiver && model.isScalerRef(receiver) ? callArguments(step).positional[0] : receiver;
}

/** Inserts `opt.zero_grad(set_to_none=True)` as the first statement of `body` (after a docstring). */
function zeroGradFix(model: SemanticModel, step: Node, body: Node | null, text: TextLike): Fix[] {
  const optimizer = steppedOptimizer(model, step);
  const statements = body?.namedChildren.filter((child) => child.type !== 'comment') ?? [];
  let first = statements[0];
  if (first?.type === 'expression_statement' && first.namedChildren[0]?.type === 'string' && statements[1]) first = statements[1];
  // A body on the header's own line (`for x in xs: step()`) has no line to insert before.
  if (!optimizer || !first || lineIndent(first).length !== first.startPosition.column) return [];
  return [{
    title: t('Clear gradients: {0}.zero_grad(set_to_none=True) at the start of each step', optimizer.text),
    safe: false,
    preferred: true,
    edits: [insertAt({ line: first.startPosition.row, character: 0 }, `${lineIndent(first)}${optimizer.text}.zero_grad(set_to_none=True)${lineEnding(text)}`)],
  }];
}

/** `dist_autograd.backward(context_id, [loss])` in the same function as the step. */
function usesDistributedAutograd(model: SemanticModel, step: Node): boolean {
  const fn = model.functionOf(step)?.node ?? model.root;
  return model.callsWithin(fn).some((call) => calleeName(call) === 'backward' && (model.qualify(call.childForFieldName('function')) ?? '').startsWith('torch.distributed.autograd.'));
}

export const missingZeroGrad: Rule = {
  ...ruleCode('OOM103'),
  code: 'OOM103',
  check({ model, text, inRegion, regionNodes }) {
    const reports: RuleReport[] = [];
    const reported = new Set<number>();
    const report = (step: Node, body: Node | null) => {
      if (reported.has(step.id)) return;
      reported.add(step.id);
      reports.push({
        fixes: zeroGradFix(model, step, body, text),
        node: step,
        message: t('This loop runs backward and steps the optimizer but never clears gradients, so each step adds to the last one and the gradients stay allocated through the next forward. Call optimizer.zero_grad(set_to_none=True) once per step.'),
      });
    };
    for (const step of regionNodes(model.callsNamed('step'))) {
      if (!inRegion(step) || !model.isOptimizerStep(step)) continue;
      const fn = model.functionOf(step);
      // Lightning's automatic optimization clears gradients itself.
      if (fn?.classInfo?.isLightning) continue;
      // Distributed autograd keeps each iteration's gradients in its own context: nothing to clear.
      if (usesDistributedAutograd(model, step)) continue;
      const loops = enclosingLoops(step);
      if (loops.length > 0) {
        const trainingLoop = loops.find((loop) => model.runsBackward(loop));
        if (trainingLoop && !model.clearsGradients(trainingLoop)) report(step, trainingLoop.childForFieldName('body'));
        continue;
      }
      // The step is in a function that a loop calls once per batch.
      if (!fn || model.clearsGradients(fn.node)) continue;
      for (const caller of model.callersOf(fn)) {
        const trainingLoop = enclosingLoops(caller).find((loop) => model.runsBackward(loop));
        if (trainingLoop && !model.clearsGradients(trainingLoop)) report(step, fn.body);
      }
    }
    return reports;
  },
};
