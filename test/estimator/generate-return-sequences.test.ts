// generate() sampling several completions per prompt (num_return_sequences without beam search) expands the prompts
// before the first step: its KV cache and logits are those of that many times the prompts. The prompts' rows are read
// from the tensor generate is given, made in a helper outside any loop.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { estimateFixture } from './helpers';

const fixture = (name: string): string => path.join('generate', name);

test('8 prompts sampled 4 times each hold what 32 prompts sampled once hold', async () => {
  const four = await estimateFixture(fixture('sample_four_per_prompt.py'));
  const one = await estimateFixture(fixture('sample_one_per_prompt.py'));
  assert.equal(four.unresolved, undefined);
  // The batch is the rows of the prompts given to generate: PROMPTS (line 5), through make_prompts(n, length).
  assert.equal(four.detected.batchSize?.value, 8);
  assert.equal(four.detected.batchSize?.line, 5);
  assert.equal(one.detected.batchSize?.value, 32);
  assert.equal(four.breakdown.activations, one.breakdown.activations);
  assert.ok(four.assumptions.some((a) => a.includes('4 sequences per prompt')), four.assumptions.join('\n'));
});
