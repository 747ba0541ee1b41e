// OOM107: .backward(retain_graph=True) inside a training loop, where each iteration's graph stays alive.
import { enclosingLoops } from '../engine/syntax';
import { t } from '../l10n';
import { ruleCode } from './codes';
import type { Rule, RuleReport } from './rule';

export const retainGraphInLoop: Rule = {
  ...ruleCode('OOM107'),
  code: 'OOM107',
  check({ model }) {
    const reports: RuleReport[] = [];
    for (const call of model.calls) {
      if (!model.isRetainGraphBackward(call)) continue;
      const loop = enclosingLoops(call)[0];
      if (!loop) continue;
      // A second backward through the same graph later in the iteration is what retain_graph is for.
      const secondBackward = model.callsWithin(loop).some((other) => other.startIndex > call.endIndex && model.isBackwardCall(other));
      if (secondBackward) continue;
      reports.push({
        node: call,
        message: t('backward(retain_graph=True) in a loop keeps this iteration\'s graph and its saved activations alive after backward; if anything carries over to the next iteration (a hidden state, a running loss), the graphs chain up step after step. Drop retain_graph=True, and detach() what is carried over.'),
      });
    }
    return reports;
  },
};
