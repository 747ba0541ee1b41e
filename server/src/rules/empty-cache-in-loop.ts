// OOM106: torch.cuda.empty_cache() inside a per-batch loop.
import type { Node } from '../engine/parser';
import type { SemanticModel } from '../engine/semantic/model';
import { enclosingLoops, enclosingStatement } from '../engine/syntax';
import { removeStatement } from '../fixes/edits';
import { t } from '../l10n';
import { ruleCode } from './codes';
import type { Rule, RuleReport } from './rule';

const OOM_ERRORS = new Set(['torch.cuda.OutOfMemoryError', 'torch.OutOfMemoryError', 'torch.cuda.memory.OutOfMemoryError']);

/** The exception classes an `except` clause names: `except A:`, `except (A, B) as e:`. */
function caughtTypes(clause: Node): readonly Node[] {
  let value = clause.childForFieldName('value');
  if (value?.type === 'as_pattern') value = value.namedChildren[0] ?? null;
  if (!value) return [];
  return value.type === 'tuple' || value.type === 'parenthesized_expression' ? value.namedChildren : [value];
}

/**
 * Whether an `except` clause handles a CUDA out-of-memory error: it names torch's OutOfMemoryError (through any
 * alias), or it catches RuntimeError (how OOMs surfaced before torch 1.13) or Exception, and the handler or the `try` body
 * mentions "out of memory". Other handlers are ordinary code that may well run once per batch.
 */
function catchesOutOfMemory(model: SemanticModel, clause: Node): boolean {
  for (const type of caughtTypes(clause)) {
    const qualified = model.qualify(type) ?? type.text;
    if (OOM_ERRORS.has(qualified)) return true;
    if (qualified === 'RuntimeError' || qualified === 'Exception') {
      const body = clause.parent?.type === 'try_statement' ? clause.parent.childForFieldName('body')?.text ?? '' : '';
      if (/out of memory/i.test(clause.text) || /out of memory/i.test(body)) return true;
    }
  }
  return false;
}

export const emptyCacheInLoop: Rule = {
  ...ruleCode('OOM106'),
  code: 'OOM106',
  check({ model, region, spells }) {
    const reports: RuleReport[] = [];
    // The query cannot match a file that never calls it; a substring test is far cheaper than a walk.
    if (!spells('empty_cache')) return reports;
    for (const match of model.queryMatches('empty-cache-in-loop', region)) {
      const call = match.get('call');
      if (!call) continue;
      const qualified = model.qualify(call.childForFieldName('function'));
      if (qualified !== 'torch.cuda.empty_cache' && qualified !== 'torch.cuda.memory.empty_cache') continue;
      // Recovering from an OOM (`except torch.cuda.OutOfMemoryError:`) is what empty_cache is for.
      let recovering = false;
      for (let node = call.parent; node && node.type !== 'function_definition'; node = node.parent) {
        if (node.type === 'except_clause' && catchesOutOfMemory(model, node)) recovering = true;
      }
      if (recovering) continue;
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
