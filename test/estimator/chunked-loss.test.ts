// A loss computed in chunks of rows outside the model, each chunk under torch.utils.checkpoint (memory-efficient LM
// repos with large vocabularies): only the chunk is recomputed in backward; the model's blocks keep what they keep.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { estimateFixture } from './helpers';

const fixture = (name: string): string => path.join('chunked-loss', name);

test('checkpoint() around a loss function of tensors does not checkpoint the model\'s blocks', async () => {
  const chunks = await estimateFixture(fixture('lm_checkpointed_loss_chunks.py'));
  const blocks = await estimateFixture(fixture('lm_checkpointed_blocks.py'));
  assert.equal(chunks.unresolved, undefined);
  assert.equal(chunks.config.checkpointing, false);
  // Checkpointed inside forward, each block keeps only its input: the same model keeps far less.
  assert.equal(blocks.config.checkpointing, true);
  assert.ok(chunks.breakdown.activations > 2 * blocks.breakdown.activations, `${chunks.breakdown.activations} vs ${blocks.breakdown.activations}`);
});

test('backward makes one chunk\'s logits again: rows of the split times the vocabulary of the weight given', async () => {
  const chunks = await estimateFixture(fixture('lm_checkpointed_loss_chunks.py'));
  // `h.split(rows)` with rows=1024 (the default of loss_in_chunks), F.linear by model.out.weight: Linear(512, 32000).
  assert.equal(chunks.config.recomputedLossElements, 1024 * 32_000);
  assert.ok(chunks.assumptions.some((a) => a.includes('chunks under checkpoint()')), chunks.assumptions.join('\n'));
  // Its fp32 log-softmax and the two gradients backward starts with sit beside what forward kept.
  assert.ok(chunks.breakdown.other >= 3 * 1024 * 32_000 * 4, `${chunks.breakdown.other}`);
});
