// OOM105: a literal written to CUDA_VISIBLE_DEVICES, which pins every run of the script to the same GPUs.
import type { Node } from '../engine/parser';
import type { SemanticModel } from '../engine/semantic/model';
import { callArguments, calleeName, callReceiver, children, enclosingStatement, stringLiteral } from '../engine/syntax';
import { removeStatement, replaceNode } from '../fixes/edits';
import type { Fix } from '../engine/types';
import { t } from '../l10n';
import { ruleCode } from './codes';
import type { Rule, RuleReport } from './rule';

const VARIABLE = 'CUDA_VISIBLE_DEVICES';

/** A value written in the source: a string without interpolation, a number, or `str(0)`. */
function isLiteral(node: Node | null | undefined): boolean {
  if (!node) return false;
  if (stringLiteral(node) !== undefined || node.type === 'integer') return true;
  if (node.type === 'call' && node.childForFieldName('function')?.text === 'str') {
    const args = callArguments(node).positional;
    return args.length === 1 && isLiteral(args[0]);
  }
  if (node.type === 'parenthesized_expression') return isLiteral(children(node)[0]);
  return false;
}

function isEnviron(model: SemanticModel, node: Node | null | undefined): boolean {
  const qualified = model.qualify(node);
  return qualified === 'os.environ';
}

const message = () =>
  t('CUDA_VISIBLE_DEVICES is pinned to a literal, so every run uses the same GPUs even when they are full and others are free. Set it when launching (CUDA_VISIBLE_DEVICES=1 python train.py) or use os.environ.setdefault(...).');

function removeFix(node: Node): Fix[] {
  const edit = removeStatement(enclosingStatement(node));
  return edit ? [{ title: t('Remove the CUDA_VISIBLE_DEVICES assignment'), safe: false, edits: [edit] }] : [];
}

export const pinnedCudaVisibleDevices: Rule = {
  ...ruleCode('OOM105'),
  code: 'OOM105',
  check({ model, inRegion, regionNodes }) {
    const reports: RuleReport[] = [];
    for (const assignment of regionNodes('assignments')) {
      const left = assignment.childForFieldName('left');
      if (!inRegion(assignment) || left?.type !== 'subscript' || !isEnviron(model, left.childForFieldName('value'))) continue;
      if (stringLiteral(left.childForFieldName('subscript')) !== VARIABLE) continue;
      const value = assignment.childForFieldName('right');
      if (!isLiteral(value)) continue;
      const environ = left.childForFieldName('value')!;
      const key = left.childForFieldName('subscript')!;
      const setdefault: Fix = {
        title: t('Use os.environ.setdefault(...) so the launcher\'s choice wins'),
        safe: false,
        preferred: true,
        edits: [replaceNode(assignment, `${environ.text}.setdefault(${key.text}, ${value!.text})`)],
      };
      reports.push({ node: assignment, message: message(), fixes: [setdefault, ...removeFix(assignment)] });
    }
    for (const call of [...regionNodes(model.callsNamed('update')), ...regionNodes(model.callsNamed('putenv'))]) {
      if (!inRegion(call)) continue;
      const name = calleeName(call);
      const { positional, keywords } = callArguments(call);
      if (name === 'update' && isEnviron(model, callReceiver(call))) {
        const keyword = keywords.get(VARIABLE);
        const fromDict = positional[0]?.type === 'dictionary'
          ? children(positional[0]).find((pair) => pair.type === 'pair' && stringLiteral(pair.childForFieldName('key')) === VARIABLE)?.childForFieldName('value')
          : undefined;
        if (isLiteral(keyword) || isLiteral(fromDict)) reports.push({ node: call, message: message(), fixes: removeFix(call) });
      } else if (name === 'putenv' && model.qualify(call.childForFieldName('function')) === 'os.putenv') {
        if (stringLiteral(positional[0]) === VARIABLE && isLiteral(positional[1])) reports.push({ node: call, message: message(), fixes: removeFix(call) });
      }
    }
    return reports;
  },
};
