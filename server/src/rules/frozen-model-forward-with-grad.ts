// OOM113: a forward in a training loop, outside no-grad, of a model that no optimizer of the file trains and whose
// requires_grad the file never turns off (a teacher, a reference, an EMA or a target network).
import {
  freezes, functionalCallModels, isParameterFree, optimizers, related, trainingLoopForwards,
} from '../engine/semantic/parameters';
import { t } from '../l10n';
import { ruleCode } from './codes';
import type { Rule, RuleReport } from './rule';

export const frozenModelForwardWithGrad: Rule = {
  ...ruleCode('OOM113'),
  code: 'OOM113',
  check({ model, spells, inRegion, region }) {
    const reports: RuleReport[] = [];
    // A training loop calls backward, and the file must build its optimizers to say which models learn.
    if (!spells('backward')) return reports;
    // Incremental analysis asks about the changed statements only: their forwards are the cheaper question there.
    const regionForwards = region?.flatMap((statement) => trainingLoopForwards(model, statement));
    if (regionForwards?.length === 0) return reports;
    const built = optimizers(model);
    // Models built or trained in another file are out of scope.
    if (built.length === 0) return reports;
    // An optimizer whose parameters the file does not show might receive any model.
    if (built.some((optimizer) => optimizer.unknown)) return reports;
    const frozen = freezes(model);
    // A freeze of something the file does not name might be this model's.
    if (frozen.unknown) return reports;
    const trained = built.flatMap((optimizer) => optimizer.sources.flatMap((source) => [...source.names]));
    const functional = functionalCallModels(model);
    for (const forward of regionForwards ?? trainingLoopForwards(model)) {
      if (!inRegion(forward.call)) continue;
      // Under no-grad nothing is recorded.
      if (model.isNoGrad(forward.call)) continue;
      const names = forward.names.names;
      // A parameter that no call of the file binds may be any model, a trained one included.
      if (names.size === 0 || names.has('self') || forward.names.unknown) continue;
      // Trained (also in part: that is OOM114's case), frozen, or run with explicit parameters.
      if (related(names, trained) || related(names, frozen.names) || related(names, functional)) continue;
      // Activations, pooling, transforms and losses have no parameters to compute gradients for.
      if (isParameterFree(model, forward.reference)) continue;
      const name = forward.reference.text.length <= 40 ? forward.reference.text : `${forward.reference.text.slice(0, 37)}...`;
      reports.push({
        node: forward.call,
        message: t("'{0}' runs with autograd recording, but no optimizer of this file receives its parameters and its requires_grad is never turned off: its forward keeps the activations a backward would need, and backward computes a gradient for each of its parameters that nothing uses, about as much memory as training it. Run it under torch.no_grad() (or call {0}.requires_grad_(False) once before the loop).", name),
      });
    }
    return reports;
  },
};
