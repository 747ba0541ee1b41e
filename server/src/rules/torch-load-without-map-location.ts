// OOM110: torch.load(...) without map_location in a distributed script, where every rank restores the checkpoint
// onto the GPU it was saved from (usually GPU 0).
import { isDistributedScript, onlyRankZeroRuns } from '../engine/semantic/distributed';
import { callArguments } from '../engine/syntax';
import { addKeywordArgument } from '../fixes/edits';
import { t } from '../l10n';
import { ruleCode } from './codes';
import type { Rule, RuleReport } from './rule';

const TORCH_LOAD = new Set(['torch.load', 'torch.serialization.load']);

export const torchLoadWithoutMapLocation: Rule = {
  ...ruleCode('OOM110'),
  code: 'OOM110',
  check({ model, text, spells, inRegion, regionNodes }) {
    const reports: RuleReport[] = [];
    // A substring test first: most files never call torch.load.
    if (!spells('load(')) return reports;
    // `torch.load(...)`, and `tload(...)` after `from torch import load as tload`.
    const names = ['load', ...[...model.imports].filter(([, target]) => TORCH_LOAD.has(target)).map(([local]) => local)];
    const candidates = [...new Set(names)].flatMap((name) => regionNodes(model.callsNamed(name)))
      .filter((call) => inRegion(call) && TORCH_LOAD.has(model.qualify(call.childForFieldName('function')) ?? ''))
      .sort((a, b) => a.startIndex - b.startIndex);
    // Only a distributed script runs the load once per GPU.
    if (candidates.length === 0 || !isDistributedScript(model)) return reports;
    for (const call of candidates) {
      const { positional, keywords } = callArguments(call);
      // `torch.load(path, map_location=...)` or `torch.load(path, "cpu")` chose a device.
      if (keywords.has('map_location') || positional.length >= 2) continue;
      // `torch.load(path, **kwargs)` may pass map_location in the dict.
      if (call.childForFieldName('arguments')?.namedChildren.some((arg) => arg.type === 'dictionary_splat')) continue;
      // One process loading once (rank 0 reading metrics, a checkpoint it broadcasts) costs one copy, not one per rank.
      if (onlyRankZeroRuns(model, call)) continue;
      const edits = addKeywordArgument(call, text, 'map_location="cpu"');
      reports.push({
        node: call,
        message: t('torch.load() without map_location restores every tensor to the device it was saved from (usually cuda:0), so each process of this distributed script puts a full copy of the checkpoint on GPU 0, which runs out first. Pass map_location="cpu" (load_state_dict then copies the weights to each rank\'s own device).'),
        fixes: edits ? [{ title: t('Add map_location="cpu"'), safe: false, preferred: true, edits }] : [],
      });
    }
    return reports;
  },
};
