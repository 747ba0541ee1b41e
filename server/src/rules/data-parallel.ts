// OOM108: nn.DataParallel, which gathers outputs on GPU 0 and runs out of memory there first.
import type { Node } from '../engine/parser';
import type { SemanticModel } from '../engine/semantic/model';
import { enclosingStatement } from '../engine/syntax';
import { t } from '../l10n';
import { ruleCode } from './codes';
import type { Rule, RuleReport } from './rule';

const DATA_PARALLEL = /(^|\.)DataParallel$/;

/**
 * The calls whose callee may qualify to a `DataParallel` (in document order): those whose last name is
 * `DataParallel`, and those of a name imported as one (`from torch.nn import DataParallel as DP`). Any other
 * callee qualifies to a name ending like its own, so the rule need not qualify every call of the file.
 */
function candidateCalls(model: SemanticModel): readonly Node[] {
  const aliases = [...model.imports].filter(([alias, resolved]) => alias !== 'DataParallel' && DATA_PARALLEL.test(resolved)).map(([alias]) => alias);
  const direct = model.callsNamed('DataParallel');
  if (aliases.length === 0) return direct;
  return [...direct, ...aliases.flatMap((alias) => model.callsNamed(alias))].sort((a, b) => a.startIndex - b.startIndex);
}

export const dataParallel: Rule = {
  ...ruleCode('OOM108'),
  code: 'OOM108',
  check({ model, inRegion, regionNodes }) {
    const reports: RuleReport[] = [];
    const reportedStatements = new Set<number>();
    const localClass = !!model.classNamed('DataParallel');
    for (const call of regionNodes(candidateCalls(model))) {
      if (!inRegion(call)) continue;
      const qualified = model.qualify(call.childForFieldName('function')) ?? '';
      if (!DATA_PARALLEL.test(qualified) || /Distributed/.test(qualified)) continue;
      // Only torch's class (through any alias); a local class that happens to share the name is not it.
      if (!/^torch\./.test(qualified) && !qualified.startsWith('nn.') && (qualified !== 'DataParallel' || localClass)) continue;
      const statement = enclosingStatement(call);
      if (reportedStatements.has(statement.id)) continue;
      reportedStatements.add(statement.id);
      reports.push({
        // Reported at the statement's first line, where a reader looks for it.
        node: statement.startPosition.row === call.startPosition.row ? call : statement,
        message: t('nn.DataParallel scatters inputs from and gathers outputs on GPU 0, so GPU 0 holds more than the others and runs out of memory first. Prefer DistributedDataParallel (one process per GPU, torchrun).'),
      });
    }
    return reports;
  },
};
