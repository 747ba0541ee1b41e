// OOM106: torch.cuda.empty_cache() inside a per-batch loop.
import { enclosingLoops, enclosingStatement } from '../engine/syntax';
import { removeStatement } from '../fixes/edits';
import { t } from '../l10n';
import { ruleCode } from './codes';
import type { Rule, RuleReport } from './rule';

export const emptyCacheInLoop: Rule = {
  ...ruleCode('OOM106'),
  code: 'OOM106',
  check({ model }) {
    const reports: RuleReport[] = [];
    for (const call of model.calls) {
      const qualified = model.qualify(call.childForFieldName('function'));
      if (qualified !== 'torch.cuda.empty_cache' && qualified !== 'torch.cuda.memory.empty_cache') continue;
      // Recovering from an OOM (`except torch.cuda.OutOfMemoryError:`) is what empty_cache is for.
      let inHandler = false;
      for (let node = call.parent; node && node.type !== 'function_definition'; node = node.parent) {
        if (node.type === 'except_clause') inHandler = true;
      }
      if (inHandler) continue;
      if (!enclosingLoops(call).some((loop) => model.isPerBatchLoop(loop))) continue;
      const statement = enclosingStatement(call);
      // Only a call that is a statement of its own can go without changing anything else.
      const edit = statement.type === 'expression_statement' && statement.namedChildren[0]?.id === call.id ? removeStatement(statement) : undefined;
      reports.push({
        fixes: edit ? [{ title: t('Remove torch.cuda.empty_cache() from the batch loop'), safe: true, preferred: true, edits: [edit] }] : [],
        node: call,
        message: t('torch.cuda.empty_cache() runs in the batch loop: it frees nothing that is still referenced, only hands cached blocks back to the driver, and every step then pays to allocate them again. Call it once per epoch, or not at all.'),
      });
    }
    return reports;
  },
};
