// OOM104: a forward pass in an evaluation loop or function that runs outside any no-grad context.
import type { Node } from '../engine/parser';
import { looksLikeEvalFunctionName } from '../engine/semantic/names';
import { lowerBound } from '../engine/semantic/model';
import type { FunctionInfo, SemanticModel } from '../engine/semantic/model';
import { callReceiver, calleeName, enclosingFunction, enclosingStatement } from '../engine/syntax';
import { t } from '../l10n';
import { ruleCode } from './codes';
import type { Rule, RuleReport } from './rule';

/**
 * The first call in `region` that runs a forward outside no-grad: a model call, or a call of a local function that
 * does one (a local function that is itself named for evaluation gets its own finding, so it is skipped here).
 */
function firstUnguardedForward(model: SemanticModel, region: Node): Node | undefined {
  for (const call of model.callsWithin(region)) {
    if (model.isNoGrad(call)) continue;
    if (model.isDirectForwardCall(call)) return call;
    const callee = model.resolveLocalFunction(call);
    if (callee && !looksLikeEvalFunctionName(callee.name) && !model.isNoGradFunction(callee) && model.summary(callee).forward && !model.summary(callee).backward) {
      return call;
    }
  }
  return undefined;
}

function isEvaluationFunction(model: SemanticModel, info: FunctionInfo): boolean {
  if (!looksLikeEvalFunctionName(info.name) || info.name.startsWith('__')) return false;
  // Lightning's validation/test/predict hooks run under no-grad already.
  if (model.isNoGradFunction(info)) return false;
  return true;
}

/** `model.eval()` calls, and the loop that follows each one in the same block (before any `model.train()`). */
function loopsAfterEvalMode(model: SemanticModel): Node[] {
  const modeCalls = model.calls.filter((call) => {
    const name = calleeName(call);
    return (name === 'eval' || name === 'train') && model.isModelRef(callReceiver(call));
  });
  const loops: Node[] = [];
  for (const call of modeCalls) {
    if (calleeName(call) !== 'eval') continue;
    const statement = enclosingStatement(call);
    const block = statement.parent;
    if (!block) continue;
    const fn = enclosingFunction(call);
    let next: Node | undefined;
    for (let i = lowerBound(model.loops, statement.endIndex); i < model.loops.length; i++) {
      const loop = model.loops[i]!;
      if (loop.startIndex >= block.endIndex) break;
      if (enclosingFunction(loop).id === fn.id) {
        next = loop;
        break;
      }
    }
    if (!next) continue;
    const loop = next;
    const backToTraining = modeCalls.some(
      (other) => calleeName(other) === 'train' && other.startIndex > statement.endIndex && other.startIndex < loop.startIndex,
    );
    if (!backToTraining) loops.push(loop);
  }
  return loops;
}

const message = () =>
  t('This forward pass runs in evaluation without torch.no_grad(), so it records an autograd graph that nothing frees by backward; every output kept from it holds its whole graph in GPU memory. Wrap the evaluation in "with torch.no_grad():" (or decorate the function with @torch.no_grad()).');

export const evalWithoutNoGrad: Rule = {
  ...ruleCode('OOM104'),
  code: 'OOM104',
  check({ model }) {
    const reports: RuleReport[] = [];
    const reported = new Set<number>();
    const report = (call: Node) => {
      if (reported.has(call.id)) return;
      reported.add(call.id);
      reports.push({ node: call, message: message() });
    };
    for (const info of model.functions) {
      if (!isEvaluationFunction(model, info)) continue;
      // An evaluation-named function that backpropagates (saliency maps, test-time training) needs its graph.
      if (model.summary(info).backward) continue;
      const forward = firstUnguardedForward(model, info.node);
      if (forward) report(forward);
    }
    for (const loop of loopsAfterEvalMode(model)) {
      if (model.runsBackward(loop)) continue;
      const info = model.functionOf(loop);
      // One finding per function: an evaluation function already reported covers its loops.
      if (info && isEvaluationFunction(model, info) && !model.summary(info).backward && firstUnguardedForward(model, info.node)) continue;
      const forward = firstUnguardedForward(model, loop);
      if (forward) report(forward);
    }
    return reports;
  },
};
