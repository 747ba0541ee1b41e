// Ensembles trained at once with torch.func (stack_module_state + vmap(functional_call)): what the batching rules
// keep beside what the same member keeps trained on its own. functorch's batch rules for layer_norm (weights
// batched), batch_norm and group_norm normalize without the affine and multiply by the stacked weight as an op of
// its own, whose backward needs the normalized tensor: one output-sized tensor more per norm with a trained affine
// (aten/src/ATen/functorch/BatchRulesNorm.cpp; test/gpu/estimator/probe_vmap10.py). Fixtures in
// test/fixtures/estimator/stacked-ensembles/, figures worked by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateFixture } from './helpers';
import type { LayerNetSpec } from '../../server/src/estimator/types';

const fixture = (name: string) => estimateFixture(`stacked-ensembles/${name}.py`);
const layers = (spec: unknown): LayerNetSpec => {
  assert.equal((spec as LayerNetSpec).kind, 'layers');
  return spec as LayerNetSpec;
};

test('stacked ensemble: each LayerNorm with its affine keeps its normalized tensor beside its output', async () => {
  const [ensemble, single] = await Promise.all([fixture('mlp_layernorm_ensemble'), fixture('mlp_layernorm_single')]);
  const width = 96;
  // One member on its own keeps, per row, each block's linear output, norm output and GELU output (GELU keeps its
  // input, the next linear the GELU's output): 3 x 96 a block, two blocks.
  assert.equal(layers(single.config.model).savedElementsPerSample, 2 * 3 * width);
  // Under vmap with the members' parameters stacked, each of the two LayerNorms keeps one 96-wide tensor more.
  assert.equal(layers(ensemble.config.model).savedElementsPerSample, 2 * 4 * width);
  // Backward, layer by layer (linear, norm, GELU, linear, norm, GELU, head): what is alive when each runs holds the
  // normalized tensors of the norms up to it, and at a norm the weight's gradient at that size too, before autograd
  // sums it to the weight's shape.
  const points = (spec: unknown) => layers(spec).backwardPoints!.map((point) => point.elements);
  const own = points(single.config.model);
  assert.deepEqual(points(ensemble.config.model).map((elements, k) => elements - own[k]!), [0, 2, 1, 1, 3, 2, 2].map((n) => n * width));
});

test('stacked ensemble: LayerNorms without an affine keep what the member keeps alone', async () => {
  const [ensemble, single] = await Promise.all([fixture('mlp_layernorm_noaffine_ensemble'), fixture('mlp_layernorm_single')]);
  assert.equal(layers(ensemble.config.model).savedElementsPerSample, layers(single.config.model).savedElementsPerSample);
});

test('stacked ensemble: the batch is what each member sees, the second axis of the (members, batch, features) input', async () => {
  const [r, withoutAffine] = await Promise.all([fixture('mlp_layernorm_ensemble'), fixture('mlp_layernorm_noaffine_ensemble')]);
  assert.equal(r.detected.batchSize?.value, 256);
  assert.equal(r.config.batchSize, 256);
  // Eight members each run the batch: the two normalized tensors of 96 fp32 values are kept for 8 x 256 rows.
  assert.equal(r.config.forwardsPerBackward, 8);
  assert.equal(r.breakdown.activations - withoutAffine.breakdown.activations, 8 * 256 * 2 * 96 * 4);
});

test('stacked ensemble: BatchNorm2d and GroupNorm with their affine each keep their normalized map', async () => {
  const [ensemble, single] = await Promise.all([fixture('convnet_norms_ensemble'), fixture('convnet_norms_single')]);
  const batchNormOutput = 16 * 32 * 32;
  const groupNormOutput = 32 * 32 * 32;
  assert.equal(ensemble.config.batchSize, 64);
  assert.equal(layers(ensemble.config.model).savedElementsPerSample - layers(single.config.model).savedElementsPerSample, batchNormOutput + groupNormOutput);
});

test('stacked ensemble: F.layer_norm given the module\'s own weight keeps the normalized tensor too; zero_grad after the vmapped forward keeps the previous gradients', async () => {
  const r = await fixture('functional_norm_ensemble');
  const hidden = 128;
  // Per row: the input linear's output (layer_norm keeps it), tanh's output (tanh and the head keep it; the norm's
  // output is kept by nothing), and the normalized tensor the stacked weight's multiply keeps.
  assert.equal(layers(r.config.model).savedElementsPerSample, 3 * hidden);
  assert.equal(r.config.batchSize, 512);
  // `prediction = predict(params, buffers, x)` then `opt.zero_grad()`: the function vmap made is the model's forward.
  assert.equal(r.config.gradsKeptAcrossSteps, true);
  assert.ok(r.assumptions.some((a) => a.includes('zero_grad() (line 31) runs after the forward')));
});

test('stacked ensemble: RMSNorm with its weight keeps its normalized tensor too (run as its composite ops under vmap)', async () => {
  const [ensemble, single] = await Promise.all([fixture('rmsnorm_ensemble'), fixture('rmsnorm_single')]);
  assert.equal(ensemble.config.batchSize, 300);
  assert.equal(layers(ensemble.config.model).savedElementsPerSample - layers(single.config.model).savedElementsPerSample, 160);
});
