// OOM115: output_hidden_states=True / output_attentions=True in a script that trains or evaluates: every layer's
// hidden states or attention maps are returned and kept for the whole step.
import type { Node } from '../engine/parser';
import { t } from '../l10n';
import { ruleCode } from './codes';
import type { Rule, RuleReport } from './rule';

function message(keyword: string): string {
  return keyword === 'output_attentions'
    ? t('output_attentions=True makes every forward return the attention maps of all layers (layers x batch x heads x sequence x sequence values), and they stay alive for the whole step, with their graph when training. Leave it off, or take the one layer you need with a forward hook.')
    : t('output_hidden_states=True makes every forward return the hidden states of all layers (layers x batch x sequence x hidden values), and they stay alive for the whole step, with their graph when training. Leave it off and take the layer you need with a forward hook, or keep only the states you use and drop the outputs right after the forward.');
}

export const outputsAllHiddenStates: Rule = {
  ...ruleCode('OOM115'),
  code: 'OOM115',
  check({ model, spells, region, inRegion, regionNodes }) {
    const reports: RuleReport[] = [];
    // The keywords are spelled out; a substring test is far cheaper than the query.
    if (!spells('output_hidden_states') && !spells('output_attentions')) return reports;
    // A script that exports or inspects a single example keeps them once, which is what it wants.
    if (!model.trainsOrEvaluatesWithin(model.root)) return reports;
    const found: Array<{ node: Node; keyword: string }> = [];
    for (const match of model.queryMatches('outputs-all-hidden-states', region)) {
      const argument = match.get('argument');
      const keyword = match.get('keyword')?.text;
      if (argument && keyword) found.push({ node: argument, keyword });
    }
    // `config.output_hidden_states = True`, `model.config.output_attentions = True`.
    for (const assignment of regionNodes('assignments')) {
      const left = assignment.childForFieldName('left');
      const attribute = left?.type === 'attribute' ? left.childForFieldName('attribute')?.text : undefined;
      if (!inRegion(assignment) || !attribute || !/^output_(hidden_states|attentions)$/.test(attribute)) continue;
      if (assignment.childForFieldName('right')?.type === 'true') found.push({ node: assignment, keyword: attribute });
    }
    for (const { node, keyword } of found.sort((a, b) => a.node.startIndex - b.node.startIndex)) {
      reports.push({ node, message: message(keyword) });
    }
    return reports;
  },
};
