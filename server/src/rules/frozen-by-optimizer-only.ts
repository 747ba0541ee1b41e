// OOM114: an optimizer over a sub-module's parameters (`model.fc.parameters()`) while the training loop runs the
// whole model and the file never turns requires_grad off for the rest: backward still computes every gradient.
import {
  coveredBy, freezes, libraryModelQualifiedNames, localModelClass, optimizers, optimizersAmong, registeredChildren, related,
  trainingLoopForwards,
} from '../engine/semantic/parameters';
import type { OptimizerInfo, TrainingForward } from '../engine/semantic/parameters';
import type { SemanticModel } from '../engine/semantic/model';
import { t } from '../l10n';
import { ruleCode } from './codes';
import type { Rule, RuleReport } from './rule';

/** The parts of a model that some optimizer of the file receives. */
function trainedNames(built: readonly OptimizerInfo[]): string[] {
  return built.flatMap((optimizer) => optimizer.sources.flatMap((source) => [...source.names]));
}

/**
 * Whether the optimizers together cover a whole model: one receives all of it, or, for a model class of this file,
 * every submodule and parameter its `__init__` registers is received by some optimizer, or, for a Transformers task
 * model, two or more of its direct children are.
 */
function coversWholeModel(model: SemanticModel, forward: TrainingForward, trained: readonly string[]): boolean {
  const names = [...forward.names.names];
  if (coveredBy(names, trained)) return true;
  const cls = localModelClass(model, forward.reference);
  if (!cls) return mayCoverTransformersModel(model, forward, trained);
  const parts = registeredChildren(model, cls);
  return parts.length > 0 && parts.every((part) => coveredBy(names.map((name) => `${name}.${part}`), trained));
}

/**
 * A Transformers task model (`BertForSequenceClassification`, `SegformerForSemanticSegmentation`) is its base model
 * plus its head(s), attributes named per model type: parameter groups over two or more direct children
 * (`model.bert`, `model.classifier`) are how such a model is trained whole with two learning rates, and which
 * children it has is not in the file. Not provable either way, so not reported.
 */
function mayCoverTransformersModel(model: SemanticModel, forward: TrainingForward, trained: readonly string[]): boolean {
  const classes = libraryModelQualifiedNames(model, forward.reference);
  if (!classes || !classes.every((name) => name.startsWith('transformers.'))) return false;
  for (const name of forward.names.names) {
    const children = new Set(trained.filter((part) => part.startsWith(`${name}.`)).map((part) => part.slice(name.length + 1)));
    if (children.size >= 2 && [...children].every((child) => !child.includes('.'))) return true;
  }
  return false;
}

export const frozenByOptimizerOnly: Rule = {
  ...ruleCode('OOM114'),
  code: 'OOM114',
  check({ model, spells, inRegion, regionNodes, region }) {
    const reports: RuleReport[] = [];
    if (!spells('parameters') || !spells('backward')) return reports;
    const candidates = region ? optimizersAmong(model, regionNodes('calls')) : optimizers(model);
    // Only an optimizer over a sub-module (`model.fc`) can leave part of a model out.
    if (!candidates.some((optimizer) => optimizer.sources.some((source) => [...source.names].some((name) => name.includes('.'))))) return reports;
    const built = optimizers(model);
    // Parameters the file does not show might cover the rest of the model.
    if (built.some((optimizer) => optimizer.unknown)) return reports;
    const frozen = freezes(model);
    if (frozen.unknown) return reports;
    const trained = trainedNames(built);
    // The models the training loops run whole (`model(x)`, not `model.encoder(x)`).
    const forwards = trainingLoopForwards(model).filter((forward) => forward.names.names.size > 0);
    for (const optimizer of built) {
      if (!inRegion(optimizer.call)) continue;
      // `filter(lambda p: p.requires_grad, ...)`: whatever is not frozen learns; the file freezes the rest itself.
      if (optimizer.filtered) continue;
      const parts: string[] = [];
      let runs: TrainingForward | undefined;
      let wholeName = '';
      for (const source of optimizer.sources) {
        for (const forward of forwards) {
          // The model as the source names it: `convnet` for `convnet.fc`, whatever the loop calls it.
          const whole = [...forward.names.names].find((name) => [...source.names].some((part) => part.startsWith(`${name}.`)));
          if (!whole || (runs && forward !== runs)) continue;
          runs ??= forward;
          wholeName ||= whole;
          parts.push(source.text);
          break;
        }
      }
      if (!runs || parts.length === 0) continue;
      // All optimizers together may receive the whole model (one per part, with different learning rates).
      if (coversWholeModel(model, runs, trained)) continue;
      // Freezing the rest (any part of the model) is the file's own statement of what learns.
      if (related(runs.names.names, frozen.names)) continue;
      reports.push({ node: optimizer.call, message: message(parts, wholeName) });
    }
    return reports;
  },
};

function message(parts: string[], whole: string): string {
  const shown = (text: string) => (text.length <= 40 ? text : `${text.slice(0, 37)}...`);
  return t("This optimizer only receives the parameters of {0}, but the training loop runs all of '{1}' and the file never turns requires_grad off for the rest: backward still computes and keeps a gradient for every parameter of '{1}' (as many bytes as its weights) and the activations that takes. Freeze the rest first ({1}.requires_grad_(False), then requires_grad_(True) on the trained part), or run the frozen part under torch.no_grad().", parts.map(shown).join(', '), shown(whole));
}
