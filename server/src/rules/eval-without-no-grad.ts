// OOM104: a forward pass in an evaluation loop or function that runs outside any no-grad context.
import { splitLines } from '../engine/lines';
import type { Node } from '../engine/parser';
import { looksLikeDataName, looksLikeEvalFunctionName } from '../engine/semantic/names';
import { callReceiver, enclosingFunction, enclosingStatement, lowerBound } from '../engine/syntax';
import type { FunctionInfo, SemanticModel } from '../engine/semantic/model';
import { addTorchImport, indentUnit, insertAt, lineEnding, lineIndent, torchNameAt } from '../fixes/edits';
import type { Fix, TextEdit } from '../engine/types';
import { t } from '../l10n';
import { ruleCode } from './codes';
import type { Rule, RuleContext, RuleReport } from './rule';
import type { TextLike } from '../engine/piece-text';

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
  // pytest's test_* functions check behaviour, they do not evaluate over a dataset.
  if (info.name.startsWith('test_') && (model.imports.has('pytest') || !takesData(info))) return false;
  // Lightning's validation/test/predict hooks run under no-grad already.
  if (model.isNoGradFunction(info)) return false;
  return true;
}

/** Whether a function takes a loader or batches (`def test_epoch(model, loader)`). */
function takesData(info: FunctionInfo): boolean {
  const parameters = info.node.childForFieldName('parameters');
  return !!parameters?.descendantsOfType('identifier').some((identifier) => looksLikeDataName(identifier.text));
}

/** `model.eval()` calls, and the loop that follows each one in the same block (before any `model.train()`). */
function loopsAfterEvalMode(model: SemanticModel, inRegion: (node: Node) => boolean, regionNodes: RuleContext['regionNodes']): Node[] {
  // Only the eval() calls of the region start a search (callsNamed is in document order); the train() calls of the
  // whole file are read only when there is one.
  const evalCalls = regionNodes(model.callsNamed('eval')).filter((call) => inRegion(call) && model.isModelRef(callReceiver(call)));
  if (evalCalls.length === 0) return [];
  // Only the train() calls between an eval() and its loop matter: looked up by position, not all checked.
  const trainCalls = model.callsNamed('train');
  const loops: Node[] = [];
  for (const call of evalCalls) {
    const statement = enclosingStatement(call);
    const block = statement.parent;
    if (!block) continue;
    const fn = enclosingFunction(call);
    let next: Node | undefined;
    for (const loop of model.nodesWithin('loops', { startIndex: statement.endIndex, endIndex: block.endIndex })) {
      if (enclosingFunction(loop).id === fn.id) {
        next = loop;
        break;
      }
    }
    if (!next) continue;
    const loop = next;
    let backToTraining = false;
    for (let i = lowerBound(trainCalls, statement.endIndex + 1); i < trainCalls.length && trainCalls[i]!.startIndex < loop.startIndex && !backToTraining; i++) {
      backToTraining = model.isModelRef(callReceiver(trainCalls[i]!));
    }
    if (!backToTraining) loops.push(loop);
  }
  return loops;
}

const message = () =>
  t('This forward pass runs in evaluation without torch.no_grad(), so it records an autograd graph that nothing frees by backward; every output kept from it holds its whole graph in GPU memory. Wrap the evaluation in "with torch.no_grad():" (or decorate the function with @torch.no_grad()).');

/** `torch` as the file names it, plus the import edit where the file has none. */
function torchReference(model: SemanticModel, text: TextLike, at: Node): { name: string; edits: TextEdit[] } {
  const name = torchNameAt(model.root, at);
  return name ? { name, edits: [] } : { name: 'torch', edits: [addTorchImport(model.root, text)] };
}

/** Decorates an evaluation function with `@torch.no_grad()`. */
function decorateFix(model: SemanticModel, info: FunctionInfo, text: TextLike): Fix[] {
  const definition = info.node.parent?.type === 'decorated_definition' ? info.node.parent : info.node;
  const torch = torchReference(model, text, definition);
  const indent = lineIndent(definition);
  return [{
    title: t('Decorate {0}() with @torch.no_grad()', info.name),
    safe: false,
    preferred: true,
    edits: [...torch.edits, insertAt({ line: definition.startPosition.row, character: 0 }, `${indent}@${torch.name}.no_grad()${lineEnding(text)}`)],
  }];
}

/** Wraps a loop in `with torch.no_grad():`, indenting its lines by one level. */
function wrapLoopFix(model: SemanticModel, loop: Node, text: TextLike): Fix[] {
  // Re-indenting would change the content of a multi-line string, and a loop that shares its first line
  // with other code cannot be wrapped alone.
  const multiLineString = loop.descendantsOfType('string').some((node) => node.endPosition.row > node.startPosition.row);
  if (multiLineString || lineIndent(loop).length !== loop.startPosition.column) return [];
  const torch = torchReference(model, text, loop);
  const unit = indentUnit(text);
  const eol = lineEnding(text);
  // The loop's lines, from the start of its first to the end of its last.
  let end = loop.endIndex;
  while (end < text.length && text.charCodeAt(end) !== 10 && text.charCodeAt(end) !== 13) end++;
  const lines = splitLines(text.slice(loop.startIndex - loop.startPosition.column, end));
  const indented = lines.map((line) => (line.trim() === '' ? line : unit + line)).join(eol);
  const indent = lineIndent(loop);
  const lastLine = loop.endPosition.row;
  return [{
    title: t('Wrap the evaluation loop in "with torch.no_grad():"'),
    safe: false,
    preferred: true,
    edits: [
      ...torch.edits,
      {
        range: { start: { line: loop.startPosition.row, character: 0 }, end: { line: lastLine, character: (lines[lines.length - 1] ?? '').length } },
        newText: `${indent}with ${torch.name}.no_grad():${eol}${indented}`,
      },
    ],
  }];
}

export const evalWithoutNoGrad: Rule = {
  ...ruleCode('OOM104'),
  code: 'OOM104',
  check({ model, text, region, inRegion, regionNodes }) {
    const reports: RuleReport[] = [];
    const reported = new Set<number>();
    const report = (call: Node, fixes: Fix[]) => {
      if (reported.has(call.id)) return;
      reported.add(call.id);
      reports.push({ node: call, message: message(), fixes, keeps: 'graph' });
    };
    for (const info of region ? region.flatMap((statement) => model.functionsWithin(statement)) : model.functions) {
      if (!isEvaluationFunction(model, info)) continue;
      // An evaluation-named function that backpropagates (saliency maps, test-time training) needs its graph.
      if (model.summary(info).backward) continue;
      const forward = firstUnguardedForward(model, info.node);
      if (forward) report(forward, decorateFix(model, info, text));
    }
    for (const loop of loopsAfterEvalMode(model, inRegion, regionNodes)) {
      if (model.runsBackward(loop)) continue;
      const info = model.functionOf(loop);
      // One finding per function: an evaluation function already reported covers its loops.
      if (info && isEvaluationFunction(model, info) && !model.summary(info).backward && firstUnguardedForward(model, info.node)) continue;
      const forward = firstUnguardedForward(model, loop);
      if (forward) report(forward, wrapLoopFix(model, loop, text));
    }
    return reports;
  },
};
