// Blocks of running sums over outer products (linear-attention memories): what their backward holds under autocast,
// and under checkpoint_sequential. cumsum's output is fp32 under autocast (its policy sets the op's dtype), but its
// backward, a reversed running sum, first casts the gradient to the input's dtype: a bf16 input's backward holds the
// fp32 gradient, its bf16 copy and three bf16 buffers; an fp32 input's the gradient and three fp32 buffers. Fixtures
// in test/fixtures/estimator/running-sum-blocks/, figures worked by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateFixture } from './helpers';
import type { LayerNetSpec } from '../../server/src/estimator/types';

/** Elements of one running sum for one sample: 768 steps of a 96 x 96 outer product. */
const RUNNING = 768 * 96 * 96;

test('under autocast a block summing bf16 outer products holds 12 bytes a running-sum element in its backward, one summing an fp32 copy 16', async () => {
  const r = await estimateFixture('running-sum-blocks/decay_memory_blocks_amp.py');
  const spec = r.config.model as LayerNetSpec;
  assert.equal(r.config.precision, 'bf16-amp');
  const perElement = spec.blockBackwardPeakAutocastBytes!.map((bytes) => bytes / RUNNING);
  // Beside those buffers, each block keeps a few (length, width) tensors of its own: well under 0.1 byte an element.
  for (const [k, bytes] of [[0, 12], [1, 16], [2, 12]] as const) {
    assert.ok(perElement[k]! >= bytes && perElement[k]! < bytes + 0.1, `block ${k}: ${perElement[k]} bytes an element`);
  }
  // Without autocast every block holds four fp32 tensors of the running sum's size.
  for (const elements of spec.blockBackwardPeakElements!) assert.ok(elements / RUNNING >= 4 && elements / RUNNING < 4.05);
});

test('checkpoint_sequential: a block\'s backward of running sums runs beside what the blocks before it in its segment keep', async () => {
  const r = await estimateFixture('running-sum-blocks/decay_memory_segments.py');
  assert.equal(r.config.checkpointing, true);
  assert.equal(r.config.checkpointSegmentCount, 2);
  assert.equal(r.peakPhase, 'backward');
  const runningBytes = 6 * RUNNING * 4;
  const persistent = r.breakdown.weights + r.breakdown.gradients + r.breakdown.optimizerStates;
  // The last segment runs normally: when its second block's cumsum backward runs (the gradient and three buffers of
  // the running sum's size), the first block of the segment still keeps its running sum for its einsum: 5 running
  // sums, as the first segment's when it is recomputed. Besides them: the blocks' small tensors, the checkpoint's
  // input, the step's input and the libraries' workspace (64 MiB, 0.4 of a running sum here).
  const held = (r.peakAllocated - persistent) / runningBytes;
  assert.ok(held >= 5 && held < 5.6, `${held} running sums`);
});
