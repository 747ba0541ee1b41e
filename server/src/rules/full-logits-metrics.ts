// OOM109: a Hugging Face Trainer with compute_metrics but no preprocess_logits_for_metrics.
import type { Node } from '../engine/parser';
import type { SemanticModel } from '../engine/semantic/model';
import { callArguments, calleeName, callReceiver, contains, dottedName } from '../engine/syntax';
import type { Fix, TextEdit } from '../engine/types';
import { indentUnit, insertAt, lineEnding, lineIndent } from '../fixes/edits';
import { t } from '../l10n';
import { ruleCode } from './codes';
import type { Rule, RuleReport } from './rule';
import type { TextLike } from '../engine/piece-text';

const HELPER_NAME = 'preprocess_logits_for_metrics';

/** Whether a syntax node holds a `prediction_loss_only=True` keyword argument (comments and strings never count). */
function setsPredictionLossOnly(node: Node | null | undefined): boolean {
  if (!node) return false;
  return node.descendantsOfType(['keyword_argument']).some(
    (kw) => kw?.childForFieldName('name')?.text === 'prediction_loss_only' && kw.childForFieldName('value')?.type === 'true',
  );
}

/** Whether `prediction_loss_only=True` is set in the call or in the TrainingArguments passed as `args`. */
function predictionLossOnly(model: SemanticModel, call: Node): boolean {
  if (setsPredictionLossOnly(call)) return true;
  const args = callArguments(call).keywords.get('args') ?? callArguments(call).positional[1];
  const name = dottedName(args);
  if (!name) return false;
  return model.assignmentsTo(name).some((assignment) => setsPredictionLossOnly(assignment.childForFieldName('right')));
}

/**
 * Whether a call builds Hugging Face's Trainer or Seq2SeqTrainer: the class imported from transformers (through
 * any alias or module path), or the bare name in a file that imports transformers (`from transformers import *`).
 * Lightning's Trainer, or a class of the same name from anywhere else, keeps no logits.
 */
function isHuggingFaceTrainer(model: SemanticModel, call: Node): boolean {
  const fn = call.childForFieldName('function');
  const qualified = model.qualify(fn) ?? '';
  const tail = qualified.split('.').pop();
  if (tail !== 'Trainer' && tail !== 'Seq2SeqTrainer') return false;
  if (/^transformers(\.|$)/.test(qualified)) return true;
  if (qualified !== tail) return false;
  // Bound names are in the import table; `from transformers import *` binds none, so read the import statements.
  const importsTransformers =
    [...model.imports.values()].some((target) => /^transformers(\.|$)/.test(target)) ||
    model.root.descendantsOfType(['import_from_statement']).some((node) => /^transformers(\.|$)/.test(node?.childForFieldName('module_name')?.text ?? ''));
  const localClass = !!model.classNamed(tail);
  return importsTransformers && !localClass;
}

/** What the model's logits hold per example, by the model class the Trainer is given. */
type LogitsKind = 'labels' | 'token-labels' | 'span' | 'vocabulary' | 'unknown';

function kindOfClass(qualified: string): LogitsKind | undefined {
  const name = qualified.split('.').filter((part) => /^[A-Z]/.test(part)).pop() ?? '';
  if (/For(Sequence|Image|Audio|Video)Classification$|ForMultipleChoice$|ForNextSentencePrediction$/.test(name)) return 'labels';
  if (/ForTokenClassification$|ForAudioFrameClassification$/.test(name)) return 'token-labels';
  if (/ForQuestionAnswering$/.test(name)) return 'span';
  if (/ForCausalLM$|LMHeadModel$|ForMaskedLM$|ForSeq2SeqLM$|ForConditionalGeneration$|ForPreTraining$|^(T5|MT5|Bart|MBart|Pegasus|Marian)Model$/.test(name)) return 'vocabulary';
  return undefined;
}

/**
 * The kind of logits the Trainer's model returns, from the class that builds it: `model=` (or the first argument),
 * followed through the names it was assigned from (`get_peft_model(base, cfg)`, `.to(device)`).
 */
function logitsKind(model: SemanticModel, call: Node): LogitsKind {
  const { positional, keywords } = callArguments(call);
  const seen = new Set<number>();
  const kinds = new Set<LogitsKind>();
  const visit = (node: Node | undefined, depth: number): void => {
    if (!node || depth > 4 || seen.has(node.id)) return;
    seen.add(node.id);
    if (node.type === 'call') {
      const fn = node.childForFieldName('function');
      const kind = kindOfClass(model.qualify(fn) ?? '');
      if (kind) {
        kinds.add(kind);
        return;
      }
      const receiver = callReceiver(node);
      // `Model.from_pretrained(...).to(device)`, `get_peft_model(base, config)`, `accelerator.prepare(model)`.
      if (receiver && /^(to|cuda|half|float|bfloat16|train|eval)$/.test(calleeName(node) ?? '')) visit(receiver, depth + 1);
      else if (/peft|prepare|compile/i.test(calleeName(node) ?? '')) visit(callArguments(node).positional[0], depth + 1);
      else kinds.add('unknown');
      return;
    }
    const name = dottedName(node);
    if (!name) {
      kinds.add('unknown');
      return;
    }
    const values = model.assignmentsTo(name);
    if (values.length === 0) kinds.add('unknown');
    for (const assignment of values) visit(assignment.childForFieldName('right') ?? undefined, depth + 1);
  };
  visit(keywords.get('model') ?? positional[0], 0);
  const isSeq2Seq = /Seq2SeqTrainer$/.test(model.qualify(call.childForFieldName('function')) ?? '');
  if (kinds.size === 1) {
    const [kind] = kinds;
    if (kind !== 'unknown') return kind!;
  }
  return isSeq2Seq && !kinds.has('labels') && !kinds.has('token-labels') && !kinds.has('span') ? 'vocabulary' : 'unknown';
}

function logitsMessage(kind: LogitsKind): string {
  switch (kind) {
    case 'vocabulary':
      return t('This Trainer has compute_metrics but no preprocess_logits_for_metrics, so evaluation keeps the full batch x sequence x vocabulary logits of the whole eval set in memory before computing metrics. Pass preprocess_logits_for_metrics= that reduces them (for example to argmax ids).');
    case 'labels':
      return t('This Trainer has compute_metrics but no preprocess_logits_for_metrics, so evaluation keeps the logits of the whole eval set (examples x labels for this classifier) in memory before computing metrics: small for a few labels, but it grows with the eval set. Pass preprocess_logits_for_metrics= that keeps what the metric needs (for example argmax ids).');
    case 'token-labels':
      return t('This Trainer has compute_metrics but no preprocess_logits_for_metrics, so evaluation keeps the batch x sequence x labels logits of the whole eval set in memory before computing metrics. Pass preprocess_logits_for_metrics= that reduces them (for example to argmax ids).');
    case 'span':
      return t('This Trainer has compute_metrics but no preprocess_logits_for_metrics, so evaluation keeps the start and end logits (batch x sequence each) of the whole eval set in memory before computing metrics. Pass preprocess_logits_for_metrics= that keeps what the metric needs.');
    default:
      return t('This Trainer has compute_metrics but no preprocess_logits_for_metrics, so evaluation keeps every logit the model returns for the whole eval set in memory before computing metrics (for a language model, batch x sequence x vocabulary). Pass preprocess_logits_for_metrics= that reduces them (for example to argmax ids).');
  }
}

/** The top-level statement that holds `node` (a function, a class, or module code). */
function topLevelStatement(model: SemanticModel, node: Node): Node | undefined {
  return model.root.namedChildren.find((child) => contains(child, node));
}

/**
 * The unsafe fix: pass `preprocess_logits_for_metrics=` and, unless the file already has a function of that name,
 * define one before the top-level statement that builds the Trainer, keeping only the argmax ids.
 */
function addPreprocessFix(model: SemanticModel, text: TextLike, call: Node): Fix | undefined {
  const argumentList = call.childForFieldName('arguments');
  const last = argumentList?.namedChildren.filter((child) => child.type !== 'comment').pop();
  const top = topLevelStatement(model, call);
  if (!argumentList || !last || !top) return undefined;
  const eol = lineEnding(text);
  const edits: TextEdit[] = [];
  const existing = model.functions.some((fn) => fn.name === HELPER_NAME && !fn.classInfo);
  if (!existing) {
    const unit = indentUnit(text);
    const helper = [
      `def ${HELPER_NAME}(logits, labels):`,
      // The comment lands in the user's script, so it is written in the user's language.
      `${unit}# ${t('Keep the predicted ids only: evaluation then holds one id per prediction instead of every logit.')}`,
      `${unit}if isinstance(logits, tuple):`,
      `${unit}${unit}logits = logits[0]`,
      `${unit}return logits.argmax(dim=-1)`,
      '',
      '',
      '',
    ].join(eol);
    edits.push(insertAt({ line: top.startPosition.row, character: 0 }, helper));
  }
  const keyword = `${HELPER_NAME}=${HELPER_NAME}`;
  // One argument per line: add another line in the same style; otherwise append to the argument list.
  const ownLine = lineIndent(last).length === last.startPosition.column && last.startPosition.row !== argumentList.startPosition.row;
  const next = argumentList.children[argumentList.children.indexOf(last) + 1];
  if (ownLine) {
    const afterComma = next?.type === ',' ? next : undefined;
    const anchor = afterComma ?? last;
    const position = { line: anchor.endPosition.row, character: anchor.endPosition.column };
    edits.push(insertAt(position, `${afterComma ? '' : ','}${eol}${lineIndent(last)}${keyword},`));
  } else {
    edits.push(insertAt({ line: last.endPosition.row, character: last.endPosition.column }, `, ${keyword}`));
  }
  return {
    title: t('Pass preprocess_logits_for_metrics= that keeps only the argmax ids (compute_metrics then receives ids)'),
    safe: false,
    edits,
  };
}

export const fullLogitsMetrics: Rule = {
  ...ruleCode('OOM109'),
  code: 'OOM109',
  check({ model, text, spells, region }) {
    const reports: RuleReport[] = [];
    // The query cannot match a file that never writes the keyword; a substring test is far cheaper than a walk.
    if (!spells('compute_metrics')) return reports;
    for (const match of model.queryMatches('full-logits-metrics', region)) {
      const call = match.get('call');
      // Only Hugging Face's Trainer keeps logits for compute_metrics.
      if (!call || !isHuggingFaceTrainer(model, call)) continue;
      const { keywords } = callArguments(call);
      if (!keywords.has('compute_metrics') || keywords.has('preprocess_logits_for_metrics')) continue;
      // Loss-only evaluation keeps no logits.
      if (predictionLossOnly(model, call)) continue;
      const kind = logitsKind(model, call);
      // Question answering needs both start and end logits: keeping the argmax of the first would break its metric.
      const fix = kind === 'span' ? undefined : addPreprocessFix(model, text, call);
      reports.push({
        node: call,
        fixes: fix ? [fix] : [],
        message: logitsMessage(kind),
      });
    }
    return reports;
  },
};
