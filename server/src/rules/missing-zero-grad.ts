// OOM103: a training loop that calls backward and steps an optimizer but never clears gradients.
import type { Node } from '../engine/parser';
import { enclosingLoops } from '../engine/syntax';
import { t } from '../l10n';
import { ruleCode } from './codes';
import type { Rule, RuleReport } from './rule';

export const missingZeroGrad: Rule = {
  ...ruleCode('OOM103'),
  code: 'OOM103',
  check({ model }) {
    const reports: RuleReport[] = [];
    const reported = new Set<number>();
    const report = (step: Node) => {
      if (reported.has(step.id)) return;
      reported.add(step.id);
      reports.push({
        node: step,
        message: t('This loop runs backward and steps the optimizer but never clears gradients, so each step adds to the last one and the gradients stay allocated through the next forward. Call optimizer.zero_grad(set_to_none=True) once per step.'),
      });
    };
    for (const step of model.calls) {
      if (!model.isOptimizerStep(step)) continue;
      const fn = model.functionOf(step);
      // Lightning's automatic optimization clears gradients itself.
      if (fn?.classInfo?.isLightning) continue;
      const loops = enclosingLoops(step);
      if (loops.length > 0) {
        const trainingLoop = loops.find((loop) => model.runsBackward(loop));
        if (trainingLoop && !model.clearsGradients(trainingLoop)) report(step);
        continue;
      }
      // The step is in a function that a loop calls once per batch.
      if (!fn || model.clearsGradients(fn.node)) continue;
      for (const caller of model.callersOf(fn)) {
        const trainingLoop = enclosingLoops(caller).find((loop) => model.runsBackward(loop));
        if (trainingLoop && !model.clearsGradients(trainingLoop)) report(step);
      }
    }
    return reports;
  },
};
