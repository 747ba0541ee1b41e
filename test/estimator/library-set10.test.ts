// Library models and parts held by a script's modules (set 10): torchvision's create_feature_extractor and
// FeaturePyramidNetwork, and a layer walk whose maps grow absurdly (branches read as one chain).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateFixture } from './helpers';
import { findVisionModel } from '../../server/src/estimator/catalog/vision';

test('a ResNet-50 cut by create_feature_extractor under a torchvision FPN: the backbone without its head, the pyramid\'s convolutions, forward traced', async () => {
  const r = await estimateFixture('library-set10/resnet_feature_extractor_fpn.py');
  assert.equal(r.detected.model.name, 'HeatmapNet');
  // resnet50 without avgpool and fc (25,557,032 - 2,049,000); the FPN's 1x1 laterals (3840 x 128 + 4 x 128) and
  // 3x3 outputs (4 x (128 x 128 x 9 + 128)); the 1x1 head (128 x 17 + 17).
  assert.equal(r.detected.parameters, 23_508_032 + 492_032 + 590_336 + 2_193);
  assert.ok(!r.assumptions.some((a) => a.includes('could not be followed')), r.assumptions.join('\n'));
  // The maps the pyramid makes at 256 px: at least its four 128-channel outputs (64², 32², 16², 8²) per sample.
  assert.ok(r.breakdown!.activations > 12 * 128 * (64 ** 2 + 32 ** 2 + 16 ** 2 + 8 ** 2) * 4 + 1e9, `activations ${r.breakdown!.activations}`);
});

test('a layer walk that upsamples far past the input (heads side by side, read as one chain) is no estimate, not terabytes', async () => {
  const r = await estimateFixture('library-set10/parallel_upsampling_heads.py');
  assert.equal(r.detected.model.source, 'unresolved');
  assert.match(r.unresolved?.reason ?? '', /4096 times the input image's area/);
  assert.ok(r.peakAllocated < 2 ** 30, `peak ${r.peakAllocated}`);
});

test('a torchvision.ops module the engine does not size leaves the model unresolved, never counted as nothing', async () => {
  const r = await estimateFixture('library-set10/torchvision_ops_module_unsized.py');
  assert.equal(r.detected.model.source, 'unresolved');
  assert.match(r.unresolved?.reason ?? '', /SqueezeExcitation/);
});

test('parameters frozen by name patterns in a loop over a feature extractor\'s named_parameters(): the parts they name', async () => {
  const r = await estimateFixture('library-set10/freeze_by_name_patterns.py');
  // resnet34 without fc (21,797,672 - 513,000), the head (768 x 37 + 37).
  assert.equal(r.detected.parameters, 21_284_672 + 28_453);
  // conv1 (9,408), bn1 (128) and layer1's three blocks (3 x 73,984) frozen: the rest trains.
  assert.equal(r.detected.trainableParameters, 21_284_672 + 28_453 - 9_408 - 128 - 221_952);
  assert.ok(!r.assumptions.some((a) => a.includes('assumed')), r.assumptions.join('\n'));
});

test('a training function run again on larger images from a Dataset class: that run\'s batch and size, the same model with its new head', async () => {
  const r = await estimateFixture('library-set10/two_runs_dataset_class.py');
  assert.equal(r.detected.batchSize.value, 32);
  assert.equal(r.detected.imageSize?.value, 256);
  // resnet50 with a 102-class head (23,508,032 + 2048 x 102 + 102): the model the runs share, not a new build.
  assert.equal(r.detected.parameters, 23_717_030);
});

test('timm PVT v2 (b0..b5) is built from its stages, its counts within 0.1% of timm\'s published ones', () => {
  const published: Record<string, number> = { pvt_v2_b0: 3.67e6, pvt_v2_b1: 14.01e6, pvt_v2_b2: 25.36e6, pvt_v2_b3: 45.24e6, pvt_v2_b4: 62.56e6, pvt_v2_b5: 82.0e6 };
  for (const [name, count] of Object.entries(published)) {
    const built = findVisionModel(name)?.build(224, 1000);
    assert.ok(built?.kind === 'layers', name);
    assert.ok(Math.abs(built.parameters / count - 1) < 0.001, `${name}: ${built.parameters}`);
  }
  // The head is a linear from 512 features.
  const head = (classes: number): number => (findVisionModel('pvt_v2_b2')!.build(224, classes) as { parameters: number }).parameters;
  assert.equal(head(1000) - head(10), 990 * 513);
});

test('a timm PVT v2 named by an argparse default is resolved, at the batch and size the step uses', async () => {
  const r = await estimateFixture('library-set10/timm_pvt_v2_cli.py');
  assert.equal(r.detected.model.name, 'pvt_v2_b1');
  assert.equal(r.detected.model.source, 'timm');
  assert.equal(r.detected.batchSize.value, 48);
  assert.equal(r.detected.imageSize?.value, 256);
});

test('lazy layers from a YAML layer list take their widths from the forward: parameters counted, not left unresolved', async () => {
  const r = await estimateFixture('library-set10/lazy_blocks_from_yaml.py');
  assert.equal(r.detected.model.source, 'custom');
  // LazyConv2d(32, 3) on 3 channels (864) and its norm (64); LazyConv2d(64, 3) on 32 (18,432) and its norm (128);
  // LazyLinear(10) on the 64 pooled features (650).
  assert.equal(r.detected.parameters, 864 + 64 + 18_432 + 128 + 650);
});

test('weight_norm layers (both APIs) sized from a JSON string in the script: one magnitude per output beside the weight', async () => {
  const r = await estimateFixture('library-set10/weight_norm_json_string.py');
  assert.equal(r.detected.model.source, 'custom');
  // inp: 80 x 96 + 96 (+ 96 magnitudes); three 96 x 96 x 3 + 96 (+ 96 each); out: 96 + 1 (+ 1).
  assert.equal(r.detected.parameters, 80 * 96 + 96 + 96 + 3 * (96 * 96 * 3 + 96 + 96) + 96 + 1 + 1);
  assert.equal(r.detected.batchSize.value, 12);
});
