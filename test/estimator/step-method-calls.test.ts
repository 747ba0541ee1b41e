// A step that calls the model's other methods on what its first call returned (`z = model.encode(x)` then
// `model.decode(z)`; a graph encoder's `h = model.encode(src, dst)` scored by `model.score(h, triples)`): the later
// calls are traced after the first, so what they save for backward is counted. Fixtures in
// test/fixtures/estimator/step-methods/, figures worked by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateFixture } from './helpers';
import type { LayerNetSpec } from '../../server/src/estimator/types';

test('encode then decode, a module without forward(): the decoder\'s activations are kept beside the encoder\'s', async () => {
  const r = await estimateFixture('step-methods/encode_decode_methods.py');
  assert.equal(r.detected.batchSize.value, 8192);
  // The encoder keeps its input (1024) and a ReLU's output (512) a row, the decoder its two ReLUs' outputs (4096
  // each): 9,728 fp32 values a row at least. The encoder alone keeps under a fifth of that.
  assert.ok(r.breakdown.activations >= 8192 * (1024 + 512 + 2 * 4096) * 4, String(r.breakdown.activations));
});

test('a graph encoded whole then scored on the drawn triples: the score\'s gathered rows counted, the step not scaled by the triples', async () => {
  const r = await estimateFixture('step-methods/graph_encode_then_score.py');
  const spec = r.config.model as LayerNetSpec;
  // The score saves both operands of each product: the head rows, the relation rows, their product and the tail
  // rows, each 200,000 x 256 fp32.
  const scoreSaved = 4 * 200_000 * 256;
  const saved = spec.savedElementsPerSample! * (spec.batchDependent?.batch ?? 1);
  assert.ok(saved >= scoreSaved, String(saved));
  // Every tensor of the step is the whole graph's or the triples': the figures are the step's, not per triple.
  assert.ok(r.peakAllocated < 8 * 1024 ** 3, String(r.peakAllocated));
  assert.ok(r.breakdown.activations >= scoreSaved * 4, String(r.breakdown.activations));
});
