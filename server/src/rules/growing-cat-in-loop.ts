// OOM117: a tensor that lives across the iterations of a batch loop and grows by concatenation on the GPU
// (`preds = torch.cat([preds, logits])`): it holds every batch at once, and each step copies all of it again.
import type { Node } from '../engine/parser';
import { possibleValues } from '../engine/semantic/bindings';
import { isOnCpu } from '../engine/semantic/devices';
import { callArguments, calleeName, callReceiver, children, dottedName, enclosingLoops } from '../engine/syntax';
import type { SemanticModel } from '../engine/semantic/model';
import type { Fix, TextEdit } from '../engine/types';
import { asReceiver, replaceNode } from '../fixes/edits';
import { t } from '../l10n';
import { ruleCode } from './codes';
import type { Rule, RuleReport } from './rule';

/** The tensors a concatenation joins: the list or tuple it is given. */
function joined(call: Node): readonly Node[] | undefined {
  const { positional, keywords } = callArguments(call);
  const list = positional[0] ?? keywords.get('tensors');
  return list && (list.type === 'list' || list.type === 'tuple') ? children(list) : undefined;
}

/** Whether an assignment grows `name` by concatenation: `name = torch.cat([name, x])` (also in a conditional's branch). */
function growthCall(model: SemanticModel, assignment: Node, name: string): Node | undefined {
  const right = assignment.childForFieldName('right');
  const branches = right?.type === 'conditional_expression' ? children(right).filter((_, i) => i !== 1) : right ? [right] : [];
  return branches.find((branch) =>
    branch.type === 'call' && /^torch\.(cat|concat|concatenate|vstack|hstack|row_stack|column_stack|dstack)$/.test(model.qualify(branch.childForFieldName('function')) ?? '') &&
    !!joined(branch)?.some((element) => dottedName(element) === name));
}

/**
 * The loop whose iterations the buffer outlives: the innermost enclosing loop that runs once per batch (a loop over
 * a loader, a dataset or batches, or the innermost loop around a backward or an optimizer step). Decoding loops over
 * tokens are not batch loops, and neither is an epoch loop around a batch loop (it grows a buffer once per epoch).
 */
function batchLoop(model: SemanticModel, site: Node): Node | undefined {
  return enclosingLoops(site).find((loop) => model.isPerBatchLoop(loop));
}

/** Whether `name` is only ever rebound inside `loop` by growth assignments (so it carries over between iterations). */
function carriesOver(model: SemanticModel, name: string, loop: Node): boolean {
  for (const assignment of model.nodesWithin('assignments', loop)) {
    const left = assignment.childForFieldName('left');
    if (!left || !model.targetNames(left).includes(name)) continue;
    if (!growthCall(model, assignment, name)) return false;
  }
  for (const inner of model.nodesWithin('loops', loop)) {
    const left = inner.type === 'for_statement' ? inner.childForFieldName('left') : null;
    if (left && model.targetNames(left).includes(name)) return false;
  }
  return true;
}

/** Whether a piece is on the CPU: moved there, made there, or a batch as the DataLoader yields it (never moved). */
function pieceOnCpu(model: SemanticModel, piece: Node, loop: Node): boolean {
  if (isOnCpu(model, piece)) return true;
  if (piece.type !== 'identifier') return false;
  const definitions = model.reachingDefinitions(piece.text, piece);
  if (definitions.length === 0) return false;
  return definitions.every((definition) => {
    // `for x, y in loader:` with `y` never moved: a DataLoader yields CPU tensors.
    if (definition.kind === 'for') return definition.site.id === loop.id && iteratesOverLoader(loop);
    if (definition.kind !== 'assign' || !definition.value || definition.index !== undefined) return false;
    if (isOnCpu(model, definition.value)) return true;
    const { values, unknown } = possibleValues(model, definition.value);
    return !unknown && values.length > 0 && values.every((value) => isOnCpu(model, value.node));
  });
}

/** A loop over a loader-like name (not over a generator function of the file, which may yield GPU tensors). */
function iteratesOverLoader(loop: Node): boolean {
  let iterable = loop.childForFieldName('right');
  while (iterable?.type === 'call' && ['enumerate', 'tqdm', 'zip', 'iter'].includes(calleeName(iterable) ?? '')) iterable = callArguments(iterable).positional[0] ?? null;
  return iterable?.type === 'identifier' || iterable?.type === 'attribute';
}

/** `piece` moved off the GPU: `x.to(device)` → `x.cpu()`, `x.detach()` → `x.detach().cpu()`, `out` → `out.detach().cpu()`. */
function offGpu(model: SemanticModel, piece: Node): string {
  const method = piece.type === 'call' ? calleeName(piece) : undefined;
  const receiver = piece.type === 'call' ? callReceiver(piece) : undefined;
  if (receiver && (method === 'to' || method === 'cuda')) return `${asReceiver(receiver)}.cpu()`;
  if (method === 'detach') return `${piece.text}.cpu()`;
  return model.isAttached(piece) ? `${asReceiver(piece)}.detach().cpu()` : `${asReceiver(piece)}.cpu()`;
}

/** The unsafe fix: each piece (and the buffer, for its first step) moves to the CPU before the concatenation. */
function moveToCpuFix(model: SemanticModel, assignment: Node, call: Node, name: string, pieces: Node[]): Fix {
  const edits: TextEdit[] = [];
  const right = assignment.childForFieldName('right')!;
  const conditional = right.type === 'conditional_expression';
  for (const piece of pieces) edits.push(replaceNode(piece, offGpu(model, piece)));
  // `all = x if all is None else torch.cat([all, x])`: the first value is the other branch.
  if (conditional) {
    const other = children(right).filter((_, i) => i !== 1).find((branch) => branch.id !== call.id);
    const same = other && pieces.find((piece) => piece.text === other.text);
    if (other && same) edits.push(replaceNode(other, offGpu(model, same)));
  } else {
    // A buffer made on the GPU (`torch.empty(0, device="cuda")`) moves on the first step; later `.cpu()` is free.
    for (const element of joined(call) ?? []) if (dottedName(element) === name) edits.push(replaceNode(element, `${element.text}.cpu()`));
  }
  return { title: t('Move each piece to the CPU before concatenating ({0})', offGpu(model, pieces[0]!)), safe: false, edits };
}

/** Whether a function runs once per batch: some loop that calls it is a batch loop. */
function calledPerBatch(model: SemanticModel, site: Node): boolean {
  const info = model.functionOf(site);
  return !!info && model.callersOf(info).some((caller) => enclosingLoops(caller).some((loop) => model.isPerBatchLoop(loop)));
}

const CONCATENATIONS = ['cat', 'concat', 'concatenate', 'vstack', 'hstack', 'row_stack', 'column_stack', 'dstack'];

/** The assignment a concatenation is the value of (also as a branch of a conditional expression), if any. */
function assignmentOf(call: Node): Node | undefined {
  let parent = call.parent;
  if (parent?.type === 'conditional_expression') parent = parent.parent;
  return parent?.type === 'assignment' && (parent.childForFieldName('right')?.id === call.id || parent.childForFieldName('right')?.id === call.parent?.id) ? parent : undefined;
}

export const growingCatInLoop: Rule = {
  ...ruleCode('OOM117'),
  code: 'OOM117',
  check({ model, inRegion, regionNodes }) {
    const reports: RuleReport[] = [];
    const candidates = CONCATENATIONS.flatMap((name) => regionNodes(model.callsNamed(name))).sort((a, b) => a.startIndex - b.startIndex);
    for (const candidate of candidates) {
      const assignment = assignmentOf(candidate);
      if (!assignment || !inRegion(assignment)) continue;
      const target = assignment.childForFieldName('left');
      const name = dottedName(target);
      if (!name) continue;
      const call = growthCall(model, assignment, name);
      // Growth needs the target itself among the joined tensors (`preds = torch.cat([preds, logits])`).
      if (!call || call.id !== candidate.id) continue;
      const loop = batchLoop(model, assignment);
      if (loop) {
        // Rebuilt in every iteration (a decoding loop's `ids`, reset per batch): nothing carries over.
        if (!carriesOver(model, name, loop)) continue;
      } else if (!(name.includes('.') && calledPerBatch(model, assignment))) {
        // Outside a batch loop, only an attribute grown by a method that every batch calls outlives the batch.
        continue;
      }
      const pieces = (joined(call) ?? []).filter((element) => dottedName(element) !== name);
      // Pieces moved off the GPU first (`.cpu()`, `.numpy()`, `.tolist()`, `.item()`) grow a CPU buffer.
      if (pieces.length === 0 || pieces.every((piece) => pieceOnCpu(model, piece, loop ?? assignment))) continue;
      const shown = name.length <= 40 ? name : `${name.slice(0, 37)}...`;
      reports.push({
        node: assignment,
        fixes: [moveToCpuFix(model, assignment, call, name, pieces)],
        message: t("'{0}' grows by concatenation in every batch and stays on the GPU: it holds all the batches at once, and each step copies the whole buffer again, so the peak is about twice its final size. Move each piece off the GPU first ({1}), or collect the pieces in a list and concatenate once after the loop.", shown, offGpu(model, pieces[0]!)),
      });
    }
    return reports;
  },
};
