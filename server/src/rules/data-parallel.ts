// OOM108: nn.DataParallel, which gathers outputs on GPU 0 and runs out of memory there first.
import { enclosingStatement } from '../engine/syntax';
import { t } from '../l10n';
import { ruleCode } from './codes';
import type { Rule, RuleReport } from './rule';

export const dataParallel: Rule = {
  ...ruleCode('OOM108'),
  code: 'OOM108',
  check({ model, inRegion, regionNodes }) {
    const reports: RuleReport[] = [];
    const reportedStatements = new Set<number>();
    const localClass = !!model.classNamed('DataParallel');
    for (const call of regionNodes(model.calls)) {
      if (!inRegion(call)) continue;
      const qualified = model.qualify(call.childForFieldName('function')) ?? '';
      if (!/(^|\.)DataParallel$/.test(qualified) || /Distributed/.test(qualified)) continue;
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
