// Attentive statistics pooling (a softmax over time weighting a mean and a second moment, `sum(x * w)` and
// `sum(x ** 2 * w)`): the second product's backward runs first and the gradient it makes for the shared weights waits
// in autograd's buffer while the first product's backward makes its own three gradients; under autocast the weights
// are fp32 (softmax), so are the products and every one of those gradients. Measured on the H200
// (test/gpu/estimator/results/probe_under12.jsonl, asp_b64): 8 half maps over what was kept. Fixtures in
// test/fixtures/estimator/weighted-pooling/, figures worked by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateFixture } from './helpers';
import { estimateFromConfig } from '../../server/src/estimator/index';
import type { LayerNetSpec } from '../../server/src/estimator/types';

/** One sample's pooled map: 1024 channels x 400 frames. */
const MAP = 1024 * 400;

test('under autocast the pooling\'s backward holds four fp32 gradients of the map: 2 bytes over half each', async () => {
  const r = await estimateFixture('weighted-pooling/attentive_stats_pooling_amp.py');
  assert.equal(r.config.precision, 'fp16-amp');
  const spec = r.config.model as LayerNetSpec;
  // The first product's output gradient and its two operands' (x and w), and the waiting gradient of w.
  assert.equal(spec.backwardPeakAutocastSurplusBytesPerSample, 4 * MAP * 2);
  // In elements, that point holds what forward kept up to the first product and those four maps: three over all it
  // keeps, the squared map the second product keeps being kept after it (with a few pooled values).
  const over = spec.backwardPeakElementsPerSample! - spec.savedElementsPerSample;
  assert.ok(over >= 2.98 * MAP && over <= 3 * MAP, String(over / MAP));
  // The surplus is in the peak: 64 samples of it (the net as traced, not rebuilt).
  const as = (model: LayerNetSpec) => estimateFromConfig({ ...r.config, rebuildAt: undefined, model });
  const [withSurplus, without] = [as(spec), as({ ...spec, backwardPeakAutocastSurplusBytesPerSample: undefined })];
  assert.equal(withSurplus.peakPhase, 'backward');
  assert.equal(withSurplus.peakAllocated - without.peakAllocated, 64 * 4 * MAP * 2);
});

test('without autocast the same pooling adds no surplus: its gradients are fp32 like its activations', async () => {
  const r = await estimateFixture('weighted-pooling/attentive_stats_pooling_fp32.py');
  assert.equal(r.config.precision, 'fp32');
  const spec = r.config.model as LayerNetSpec;
  const as = (model: LayerNetSpec) => estimateFromConfig({ ...r.config, rebuildAt: undefined, model });
  assert.equal(as(spec).peakAllocated, as({ ...spec, backwardPeakAutocastSurplusBytesPerSample: 4 * MAP * 2 }).peakAllocated);
});
