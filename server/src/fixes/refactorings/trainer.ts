// The three refactorings for a Hugging Face `Trainer` script, which has no training loop of its own: they edit the
// `TrainingArguments(...)` (or `Seq2SeqTrainingArguments`, TRL's `SFTConfig`) call instead. `bf16=True` / `fp16=True`
// switch the Trainer's own autocast on; `gradient_checkpointing=True` (non-reentrant) recomputes the model's layers;
// `gradient_accumulation_steps=K` with `per_device_train_batch_size` divided by K keeps the effective batch. The
// Trainer counts `max_steps`, `logging_steps`, `eval_steps` and its LR schedule in optimizer steps, so none of them
// needs to change.
import type { Node } from '../../engine/parser';
import type { SemanticModel } from '../../engine/semantic/model';
import { callArguments, calleeName } from '../../engine/syntax';
import type { Position, TextEdit } from '../../engine/types';
import { numberOf } from '../../engine/program/values';
import type { ProgramModel } from '../../engine/program/interpreter';
import { t } from '../../l10n';
import { insertAt, replaceNode } from '../edits';
import { linesOf } from './training-loop';
import type { Refactoring } from './training-loop';
import { ACCUMULATION_CHOICES } from './accumulation';
import { overflowsInFloat16 } from './amp';

const ARGUMENT_CLASSES = /^(TrainingArguments|Seq2SeqTrainingArguments|SFTConfig)$/;

/** The `TrainingArguments(...)` call the cursor is on (any of its lines), or the one a `Trainer(...)` on that line gets. */
function argumentsCallAt(model: SemanticModel, position: Position): Node | undefined {
  const onLine = (call: Node) => call.startPosition.row <= position.line && position.line <= call.endPosition.row;
  const direct = model.calls.find((call) => ARGUMENT_CLASSES.test(calleeName(call) ?? '') && onLine(call));
  if (direct) return direct;
  const trainer = model.calls.find((call) => /Trainer$/.test(calleeName(call) ?? '') && onLine(call));
  const args = trainer ? callArguments(trainer).keywords.get('args') : undefined;
  if (!args) return undefined;
  if (args.type === 'call' && ARGUMENT_CLASSES.test(calleeName(args) ?? '')) return args;
  // `args=training_args`, built once before.
  const built = model.assignments.filter((assignment) => assignment.childForFieldName('left')?.text === args.text)
    .map((assignment) => assignment.childForFieldName('right'))
    .filter((right): right is Node => right?.type === 'call' && ARGUMENT_CLASSES.test(calleeName(right) ?? ''));
  return built.length === 1 ? built[0] : undefined;
}

/** Edits that add `name=value` arguments to a call, each on a line of its own where the call puts one argument per line. */
function addKeyword(text: string, call: Node, ...added: string[]): TextEdit[] {
  const list = call.childForFieldName('arguments')!;
  const items = list.namedChildren.filter((child): child is Node => !!child && child.type !== 'comment');
  const last = items[items.length - 1];
  const close = list.endPosition;
  if (!last) return [insertAt({ line: close.row, character: close.column - 1 }, added.join(', '))];
  const lines = linesOf(text);
  const trailingComma = list.text.slice(last.endIndex - list.startIndex).trimStart().startsWith(',');
  if (last.endPosition.row < close.row) {
    // One argument per line: new lines with the last argument's indentation, before the closing parenthesis (after
    // a comment that ends the last argument's line; its comma goes right after the argument).
    const indent = /^[ \t]*/.exec(lines[last.startPosition.row] ?? '')![0];
    const eol = text.includes('\r\n') ? '\r\n' : '\n';
    const endOfLine = { line: last.endPosition.row, character: lines[last.endPosition.row]!.length };
    const comma = trailingComma ? [] : [insertAt({ line: last.endPosition.row, character: last.endPosition.column }, ',')];
    return [...comma, insertAt(endOfLine, added.map((argument) => `${eol}${indent}${argument},`).join(''))];
  }
  return [insertAt({ line: last.endPosition.row, character: last.endPosition.column }, added.map((argument) => `, ${argument}`).join(''))];
}

function isTrue(program: ProgramModel, node: Node | undefined): boolean {
  const value = program.valueOf(node);
  return node?.type === 'true' || (value?.kind === 'bool' && value.value);
}

/**
 * The refactorings of the Trainer's arguments at `position`. `halfWeights` (asked only there): the model's weights are already bf16/fp16
 * (the Trainer's autocast would add nothing, and fp16's GradScaler cannot unscale half gradients).
 */
export function trainerRefactorings(model: SemanticModel, program: ProgramModel, text: string, position: Position, halfWeights: () => boolean, accumulation?: number): Refactoring[] {
  const call = argumentsCallAt(model, position);
  if (!call) return [];
  const { keywords } = callArguments(call);
  const refactorings: Refactoring[] = [];
  const precisionOn = ['bf16', 'fp16', 'bf16_full_eval', 'fp16_full_eval'].some((name) => isTrue(program, keywords.get(name)));
  if (!precisionOn && !keywords.has('bf16') && !keywords.has('fp16') && !halfWeights()) {
    refactorings.push({ title: t('Enable mixed precision (AMP, bfloat16) in TrainingArguments (bf16=True)'), edits: addKeyword(text, call, 'bf16=True') });
    const fp16Title = overflowsInFloat16(model, text)
      ? t('Enable mixed precision (AMP, float16 with GradScaler; T5 models are known to overflow in float16, prefer bfloat16) in TrainingArguments (fp16=True)')
      : t('Enable mixed precision (AMP, float16 with GradScaler) in TrainingArguments (fp16=True)');
    refactorings.push({ title: fp16Title, edits: addKeyword(text, call, 'fp16=True') });
  }
  if (!keywords.has('gradient_checkpointing') && !model.calls.some((c) => calleeName(c) === 'gradient_checkpointing_enable' && !program.neverRuns(c))) {
    refactorings.push({
      title: t('Enable gradient checkpointing in TrainingArguments (gradient_checkpointing=True)'),
      // Non-reentrant: gradients still reach trainable layers behind frozen ones (LoRA, frozen embeddings).
      edits: addKeyword(text, call, 'gradient_checkpointing=True', 'gradient_checkpointing_kwargs={"use_reentrant": False}'),
    });
  }
  const batchNode = keywords.get('per_device_train_batch_size');
  const batch = numberOf(program.valueOf(batchNode));
  const current = numberOf(program.valueOf(keywords.get('gradient_accumulation_steps'))) ?? 1;
  if (batchNode && batch !== undefined && current === 1 && !keywords.has('gradient_accumulation_steps')) {
    for (const n of accumulation !== undefined ? [accumulation] : ACCUMULATION_CHOICES) {
      if (batch % n !== 0 || batch / n < 1) continue;
      const divided = batchNode.type === 'integer' ? String(batch / n) : `${batchNode.text} // ${n}`;
      refactorings.push({
        title: t('Add gradient accumulation ({0} steps, micro-batch {1} instead of {2})', n, batch / n, batch),
        edits: [replaceNode(batchNode, divided), ...addKeyword(text, call, `gradient_accumulation_steps=${n}`)],
      });
    }
  }
  return refactorings;
}
