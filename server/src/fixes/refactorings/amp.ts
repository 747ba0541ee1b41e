// Refactoring "Enable mixed precision (AMP)": wraps the forward and the loss of a training loop in
// `with torch.autocast(device_type="cuda", dtype=...)`. The float16 variant also adds a GradScaler: the loss is
// scaled before backward, the optimizer steps through the scaler, the scaler updates after each step, and gradients
// are unscaled before an existing clip_grad_norm_ (which must see the true gradients).
import type { Node } from '../../engine/parser';
import { callArguments, calleeName, callReceiver, dottedName } from '../../engine/syntax';
import type { TextEdit } from '../../engine/types';
import { t } from '../../l10n';
import { addTorchImport, lineIndent, replaceNode, torchNameAt } from '../edits';
import {
  bodyStatement,
  holdsMultiLineString,
  insertLinesAfter,
  detectedConfig,
  insertLinesBefore,
  isStepRelatedCall,
  lineAbove,
  reindent,
  replaceLines,
  standsAlone,
  statementCall,
  statementOf,
  statementsOf,
  unitOf,
  usesName,
  weightsAreHalf,
} from './training-loop';
import type { Refactoring, RefactoringContext } from './training-loop';
import type { SemanticModel } from '../../engine/semantic/model';

/** Whether the file already runs under autocast, or casts its model to half precision itself. */
function hasMixedPrecision(context: RefactoringContext): boolean {
  const { model } = context;
  return model.calls.some((call) => {
    const name = calleeName(call);
    if (name === 'autocast') return true;
    // `model.half()` trains in pure low precision; autocast on top of it changes nothing.
    return (name === 'half' || name === 'bfloat16') && model.isModelRef(callReceiver(call));
  });
}

/** Whether a call runs a forward pass, directly or through a function of this file. */
function runsForward(context: RefactoringContext, call: Node): boolean {
  const { model } = context;
  if (model.isDirectForwardCall(call)) return true;
  const callee = model.resolveLocalFunction(call);
  return !!callee && model.summary(callee).forward && !model.summary(callee).backward;
}

function isClear(context: RefactoringContext, statement: Node): boolean {
  const call = statementCall(statement);
  return !!call && context.model.isGradClearCall(call);
}

interface Plan {
  /** Body statements from the first forward to the statement before the backward. */
  first: Node;
  last: Node;
  backward: Node;
  torch: string;
  torchEdits: TextEdit[];
}

/** Whether the model is of the T5 family (t5, mt5, byt5, flan-t5, UL2), by the name the estimator read. */
export function overflowsInFloat16(model: SemanticModel, text: string): boolean {
  return model.memo('overflows-fp16', () => {
    const name = detectedConfig(model, text).model?.name ?? '';
    return /(^|[^a-z])(t5|mt5|byt5|flan-t5|ul2)([^a-z]|$)/i.test(name) || /^(T5|MT5|UMT5)\w*Config/.test(name);
  });
}

function plan(context: RefactoringContext): Plan | undefined {
  const { model, text, loop } = context;
  // Autocast already in place (or a model cast to half): nothing to add.
  // Weights already bf16/fp16: autocast saves nothing, and a fp16 GradScaler cannot unscale half gradients (it raises).
  if (hasMixedPrecision(context) || weightsAreHalf(context.model, context.text, context.filePath)) return undefined;
  const backwards = loop.directCalls.filter((call) => model.isBackwardCall(call));
  // One backward in the loop body; several (GANs, multi-loss) need a person to place the autocast regions.
  if (backwards.length !== 1) return undefined;
  const backward = backwards[0]!;
  const backwardStatement = bodyStatement(backward, loop.body);
  if (!backwardStatement) return undefined;
  const statements = statementsOf(loop.body);
  const before = statements.filter((statement) => statement.endIndex <= backwardStatement.startIndex);
  const firstIndex = before.findIndex((statement) =>
    loop.directCalls.some((call) => statement.startIndex <= call.startIndex && call.endIndex <= statement.endIndex && runsForward(context, call)),
  );
  // `criterion(model(x), y).backward()`: the forward and the backward share a statement.
  if (firstIndex < 0) return undefined;
  const wrapped = before.slice(firstIndex);
  // `optimizer.zero_grad()` just before the backward has nothing to do with precision: it stays outside.
  while (wrapped.length > 1 && isClear(context, wrapped[wrapped.length - 1]!)) wrapped.pop();
  // An optimizer step or gradient clipping between the forward and the backward must stay outside autocast.
  const stepInside = loop.directCalls.some(
    (call) => isStepRelatedCall(model, call) && !model.isGradClearCall(call) && wrapped.some((s) => s.startIndex <= call.startIndex && call.endIndex <= s.endIndex),
  );
  if (stepInside) return undefined;
  // Re-indenting changes multi-line strings, and statements sharing a line cannot move alone.
  if (wrapped.some((statement) => holdsMultiLineString(statement) || !standsAlone(statement)) || !standsAlone(backwardStatement)) return undefined;
  const name = torchNameAt(model.root, loop.node);
  return {
    first: wrapped[0]!,
    last: wrapped[wrapped.length - 1]!,
    backward,
    torch: name ?? 'torch',
    torchEdits: name ? [] : [addTorchImport(model.root, text)],
  };
}

function autocastEdit(context: RefactoringContext, found: Plan, dtype: string): TextEdit {
  const { text } = context;
  const indent = lineIndent(found.first);
  const first = found.first.startPosition.row;
  const last = found.last.endPosition.row;
  const header = `${indent}with ${found.torch}.autocast(device_type="cuda", dtype=${found.torch}.${dtype}):`;
  return replaceLines(text, first, last, [header, ...reindent(text, first, last, indent, indent + unitOf(text))]);
}

export function bfloat16Amp(context: RefactoringContext): Refactoring[] {
  const found = plan(context);
  if (!found) return [];
  return [{
    title: t('Enable mixed precision (AMP, bfloat16)'),
    edits: [...found.torchEdits, autocastEdit(context, found, 'bfloat16')],
  }];
}

export function float16Amp(context: RefactoringContext): Refactoring[] {
  const { model, text, loop } = context;
  const found = plan(context);
  if (!found) return [];
  const scaler = 'scaler';
  // A GradScaler already in the file, or a `scaler` name taken by something else.
  if (usesName(model, scaler) || model.calls.some((call) => calleeName(call) === 'GradScaler')) return [];
  // `accelerator.backward(loss)` and `torch.autograd.backward(loss)` scale elsewhere; only `loss.backward()` is rewritten.
  const lossNode = callReceiver(found.backward);
  if (!lossNode || calleeName(found.backward) !== 'backward') return [];
  const steps = loop.directCalls.filter((call) => model.isOptimizerStep(call));
  // Every step must be a plain `optimizer.step()` (no closure) so the scaler can take it.
  if (steps.length === 0 || steps.some((call) => model.isScalerRef(callReceiver(call)) || callArguments(call).positional.length > 0 || callArguments(call).keywords.size > 0)) return [];
  if (steps.some((call) => !standsAlone(statementOf(call)))) return [];
  const edits: TextEdit[] = [...found.torchEdits, autocastEdit(context, found, 'float16')];
  // One GradScaler for the whole run: a loop inside a function (`train_one_epoch`, called per epoch) gets it at
  // module level, so the loss scale carries over from epoch to epoch instead of starting again.
  // (A function that holds its own epoch loop runs once: the scaler goes before that loop.)
  const topLevel = topLevelStatementOf(loop.outermost);
  const perEpochFunction = topLevel.id !== loop.outermost.id && loop.outermost.id === loop.node.id;
  const moduleTorch = perEpochFunction ? torchNameAt(model.root, topLevel) : found.torch;
  if (perEpochFunction && !moduleTorch) return [];
  const created = `${scaler} = ${moduleTorch ?? found.torch}.amp.GradScaler("cuda")`;
  edits.push(perEpochFunction
    ? insertLinesBefore(text, lineAbove(text, topLevel), [created, '', ''])
    : insertLinesBefore(text, lineAbove(text, loop.outermost), [`${lineIndent(loop.outermost)}${created}`]));
  edits.push(replaceNode(found.backward, `${scaler}.scale(${lossNode.text}).backward(${argumentsText(found.backward)})`));
  for (const step of steps) {
    const optimizer = callReceiver(step)!;
    edits.push(replaceNode(step, `${scaler}.step(${optimizer.text})`));
  }
  // The scaler updates once per iteration, after the last step (GradScaler.update() must follow a step).
  const lastStep = statementOf(steps[steps.length - 1]!);
  edits.push(insertLinesAfter(text, lastStep.endPosition.row, [`${lineIndent(lastStep)}${scaler}.update()`]));
  // Clipping must see unscaled gradients: unscale the optimizer that steps next, just before the clip.
  for (const clip of loop.directCalls.filter((call) => calleeName(call) === 'clip_grad_norm_' || calleeName(call) === 'clip_grad_value_')) {
    const next = steps.find((step) => step.startIndex > clip.startIndex) ?? steps[0]!;
    const clipStatement = statementOf(clip);
    if (!standsAlone(clipStatement)) return [];
    edits.push(insertLinesBefore(text, clipStatement.startPosition.row, [`${lineIndent(clipStatement)}${scaler}.unscale_(${dottedName(callReceiver(next)) ?? callReceiver(next)!.text})`]));
  }
  // T5-family checkpoints were trained in bfloat16 and overflow in float16 (inf/NaN activations in the feed-forward).
  const title = overflowsInFloat16(context.model, context.text)
    ? t('Enable mixed precision (AMP, float16 with GradScaler; T5 models are known to overflow in float16, prefer bfloat16)')
    : t('Enable mixed precision (AMP, float16 with GradScaler)');
  return [{ title, edits }];
}

/** The statement of the module that holds `node` (a function definition, a class, or the loop itself). */
function topLevelStatementOf(node: Node): Node {
  let current = node;
  while (current.parent && current.parent.type !== 'module') current = current.parent;
  return current;
}

/** The text between a call's parentheses. */
function argumentsText(call: Node): string {
  const args = call.childForFieldName('arguments');
  return args ? args.text.slice(1, -1) : '';
}
