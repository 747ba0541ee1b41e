// OOM109: a Hugging Face Trainer with compute_metrics but no preprocess_logits_for_metrics.
import type { Node } from '../engine/parser';
import type { SemanticModel } from '../engine/semantic/model';
import { callArguments, dottedName } from '../engine/syntax';
import { t } from '../l10n';
import { ruleCode } from './codes';
import type { Rule, RuleReport } from './rule';

/** Whether `prediction_loss_only=True` is set in the call or in the TrainingArguments passed as `args`. */
function predictionLossOnly(model: SemanticModel, call: Node): boolean {
  if (/prediction_loss_only\s*=\s*True/.test(call.text)) return true;
  const args = callArguments(call).keywords.get('args') ?? callArguments(call).positional[1];
  const name = dottedName(args);
  if (!name) return false;
  return model.assignments.some((assignment) => {
    const left = assignment.childForFieldName('left');
    return dottedName(left) === name && /prediction_loss_only\s*=\s*True/.test(assignment.childForFieldName('right')?.text ?? '');
  });
}

export const fullLogitsMetrics: Rule = {
  ...ruleCode('OOM109'),
  code: 'OOM109',
  check({ model }) {
    const reports: RuleReport[] = [];
    for (const call of model.calls) {
      const qualified = model.qualify(call.childForFieldName('function')) ?? '';
      const tail = qualified.split('.').pop();
      if (tail !== 'Trainer' && tail !== 'Seq2SeqTrainer') continue;
      // Lightning's Trainer keeps no logits.
      if (/lightning/i.test(qualified) || /^pl\./.test(qualified)) continue;
      const { keywords } = callArguments(call);
      if (!keywords.has('compute_metrics') || keywords.has('preprocess_logits_for_metrics')) continue;
      if (predictionLossOnly(model, call)) continue;
      reports.push({
        node: call,
        message: t('This Trainer has compute_metrics but no preprocess_logits_for_metrics, so evaluation keeps the full batch x sequence x vocabulary logits of the whole eval set in memory before computing metrics. Pass preprocess_logits_for_metrics= that reduces them (for example to argmax ids).'),
      });
    }
    return reports;
  },
};
