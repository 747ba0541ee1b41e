// The gradients the panel shows: the breakdown is the memory at the peak, where a LoRA run (frozen head) has no
// gradient yet, so the estimate also carries all gradients once backward is done, and the panel says which is which.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { test } from 'node:test';
import { configFromTruth, isPerStepPeak, type TruthRecord } from '../../server/src/estimator/calibration';
import { toEstimateJson } from '../../server/src/estimator/index';
import { estimate } from '../../server/src/estimator/model';
import { estimateFixture, loadTruth } from './helpers';

test('LoRA: the adapters\' fp32 gradients exist after backward, though none exists at the start-of-backward peak', async () => {
  const result = await estimateFixture(path.join('validation', 'llama32_1b_lora_r8_all.py'));
  assert.ok(result.detected.lora, 'the fixture trains LoRA adapters');
  // 5,636,096 trainable parameters measured on the H200 (test/gpu/estimator/results/validate.json).
  assert.equal(result.detected.trainableParameters, 5_636_096);
  assert.equal(result.gradientsAfterBackward, 5_636_096 * 4, 'PEFT keeps adapters and their gradients in fp32');
  assert.equal(result.peakPhase, 'backward');
  assert.equal(result.breakdown.gradients, 0, 'the peak is at the start of backward, before any adapter gradient exists');
  // The CLI's JSON (spec/cli.md) is unchanged.
  assert.ok(!('gradientsAfterBackward' in toEstimateJson(result)));
});

test('tied input and output embeddings: one gradient, as measured after backward on the H200', () => {
  // grad_bytes_end: the bytes of every .grad after backward, which gpu-truth records for its leak runs.
  const measured = loadTruth()
    .map((r) => ({ record: r, gradBytesEnd: (r as TruthRecord & { grad_bytes_end?: number | null }).grad_bytes_end }))
    .filter(({ record, gradBytesEnd }) => isPerStepPeak(record) && typeof gradBytesEnd === 'number' && record.id.startsWith('gpt2_'));
  assert.ok(measured.length > 0, 'gpu-truth has GPT-2 runs with grad_bytes_end');
  for (const { record, gradBytesEnd } of measured) {
    const config = configFromTruth(record);
    assert.ok(config.model.kind === 'transformer' && config.model.tiedEmbeddings, `${record.id}: GPT-2 ties wte and lm_head`);
    const numbers = estimate(config);
    // 497,759,232 bytes = 124,439,808 fp32 parameters: the tied matrix once.
    assert.equal(numbers.gradientsAfterBackward, gradBytesEnd, record.id);
    assert.ok(numbers.breakdown.gradients <= numbers.gradientsAfterBackward, record.id);
  }
});

test('outside training there are no gradients to come', async () => {
  const result = await estimateFixture(path.join('validation', 'llama32_1b_lora_r8_all.py'));
  const inference = estimate({ ...result.config, mode: 'infer-no-grad' });
  assert.equal(inference.gradientsAfterBackward, 0);
});
