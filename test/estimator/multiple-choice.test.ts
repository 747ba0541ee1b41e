// Multiple-choice heads (issue #13, held-out set 8): `AutoModelForMultipleChoice` / `BertForMultipleChoice` take
// (batch, choices, tokens) ids and run batch x choices sequences. The choices are read from the data the step
// receives (a dict sample, a tuple sample given by keyword, ids made in the step), as the sequence length is.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { estimateFromConfig } from '../../server/src/estimator';
import { countTransformerParameters } from '../../server/src/estimator/transformer';
import { estimateText, fixturesDir } from './helpers';

const fixture = (name: string): { text: string; file: string } => {
  const file = path.join(fixturesDir, 'multiple-choice', name);
  return { text: fs.readFileSync(file, 'utf8'), file };
};

/** The same configuration, run as one sequence a sample at `batch` samples: what the choices must amount to. */
function asSequences(result: Awaited<ReturnType<typeof estimateText>>, batch: number): ReturnType<typeof estimateFromConfig> {
  const { sequencesPerSample: _rows, ...config } = result.config;
  void _rows;
  return estimateFromConfig(config, { batchSize: batch });
}

test('a dict sample of (choices, tokens) ids: every choice is a sequence of the batch', async () => {
  const { text, file } = fixture('dict_samples.py');
  const result = await estimateText(text, file);
  // bert-base-uncased (109,482,240 with its pooler) and a one-score classifier: 768 + 1.
  assert.equal(result.detected.parameters, 109_482_240 + 769);
  assert.equal(result.detected.batchSize.value, 12);
  assert.equal(result.detected.seqLen?.value, 160);
  assert.equal(result.config.sequencesPerSample, 5);
  assert.ok(result.assumptions.some((a) => /each sample holds 5 choices \(line 15\)/.test(a)), result.assumptions.join('\n'));
  // 12 samples of 5 choices are 60 sequences of 160 tokens: the activations of a batch of 60.
  const sequences = asSequences(result, 60);
  assert.equal(result.breakdown.activations, sequences.breakdown.activations);
  assert.equal(result.peakAllocated, sequences.peakAllocated);
  // Read as 12 sequences (the estimate before choices were read), activations were about a fifth.
  const once = asSequences(result, 12);
  assert.ok(result.breakdown.activations > 4.5 * once.breakdown.activations, `${result.breakdown.activations} vs ${once.breakdown.activations}`);
});

test('(batch, choices, tokens) ids made in the step, given as input_ids=', async () => {
  const { text, file } = fixture('step_tensors.py');
  const result = await estimateText(text, file);
  // BertForMultipleChoice is a model class like the Auto one (it was not read at all before).
  assert.equal(result.detected.model.name, 'bert-base-uncased');
  assert.equal(result.detected.batchSize.value, 6);
  assert.equal(result.detected.seqLen?.value, 200);
  assert.equal(result.config.sequencesPerSample, 4);
  assert.equal(result.peakAllocated, asSequences(result, 24).peakAllocated);
});

test('lists padded by hand and stacked by torch.tensor, a tuple sample given by keyword', async () => {
  const { text, file } = fixture('padded_lists_tuple_loader.py');
  const result = await estimateText(text, file);
  const spec = result.config.model;
  assert.ok(spec.kind === 'transformer' && spec.family === 'distilbert');
  // DistilBERT's multiple-choice head: pre_classifier (768 x 768 + 768) and a one-score classifier (768 + 1).
  assert.equal(result.detected.parameters, countTransformerParameters({ ...spec, task: 'base' }).total + 768 * 768 + 768 + 769);
  assert.equal(result.detected.seqLen?.value, 96);
  assert.equal(result.config.sequencesPerSample, 3);
  assert.ok(!result.assumptions.some((a) => /seq_len not found/.test(a)), result.assumptions.join('\n'));
  assert.equal(result.peakAllocated, asSequences(result, 72).peakAllocated);
});

test('choices named in a config when the data does not show them; neither: one sequence a sample, said', async () => {
  const { text, file } = fixture('step_tensors.py');
  // The ids made elsewhere, in a shape the step does not show: the config's number of choices.
  const named = text.replace('options = 4', 'num_choices = 4\noptions = num_choices')
    .replace('ids = torch.randint(0, 30522, (batch_size, options, length), device="cuda")', 'ids = load_ids(batch_size, length)');
  const byName = await estimateText(named, file);
  assert.equal(byName.config.sequencesPerSample, 4);
  const unnamed = await estimateText(text.replace('ids = torch.randint(0, 30522, (batch_size, options, length), device="cuda")', 'ids = load_ids(batch_size, length)'), file);
  assert.equal(unnamed.config.sequencesPerSample, undefined);
  assert.ok(unnamed.assumptions.some((a) => /choices each sample holds were not found/.test(a)), unnamed.assumptions.join('\n'));
  // A sequence-classification model with the same data is not a multiple-choice one.
  const classifier = await estimateText(text.replace(/BertForMultipleChoice/g, 'BertForSequenceClassification'), file);
  assert.equal(classifier.config.sequencesPerSample, undefined);
  assert.ok(!classifier.assumptions.some((a) => /multiple choice/.test(a)));
});
