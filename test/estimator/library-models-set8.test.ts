import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { estimateFixture, estimateText, fixturesDir } from './helpers';
import { findVisionModel } from '../../server/src/estimator/catalog/vision';
import { countTransformerParameters } from '../../server/src/estimator/transformer';

function readFixture(name: string): string {
  return fs.readFileSync(path.join(fixturesDir, name), 'utf8');
}

function parametersOf(name: string, numClasses = 1000): number | undefined {
  const spec = findVisionModel(name)?.build(224, numClasses);
  return spec?.kind === 'layers' ? spec.parameters : undefined;
}

test('timm RegNets are built with timm\'s width rounding: counts as timm publishes them, the _tv models as torchvision\'s', () => {
  // timm's results-imagenet.csv gives these to 0.01M (22.12M, 20.65M, 6.26M, 39.18M, 5.16M, 3.16M).
  assert.equal(parametersOf('regnetx_040'), 22_118_248);
  assert.equal(parametersOf('regnety_040'), 20_646_656);
  assert.equal(parametersOf('regnety_008'), 6_263_168);
  assert.equal(parametersOf('regnety_080'), 39_180_068);
  assert.equal(parametersOf('regnetx_004'), 5_157_512);
  assert.equal(parametersOf('regnety_002'), 3_162_996);
  // Where the two roundings agree timm's name is torchvision's model; where not, timm's `_tv` name is.
  assert.equal(parametersOf('regnety_032'), parametersOf('regnet_y_3_2gf'));
  assert.equal(parametersOf('regnety_008_tv'), parametersOf('regnet_y_800mf'));
  assert.equal(parametersOf('timm/regnety_160.swag_ft_in1k'), 83_590_140);
});

test('a timm RegNet named by an argparse default is resolved, its head sized by the class count', async () => {
  const r = await estimateFixture('library-models-set8/timm_regnet_from_cli.py');
  assert.equal(r.detected.model.name, 'regnety_040');
  assert.equal(r.detected.model.source, 'timm');
  assert.equal(r.detected.parameters, 20_646_656 - 1000 * 1088 - 1000 + 37 * 1088 + 37);
});

test('a ResNet given a small-image stem (3x3 stride-1 conv1, max-pool replaced by nn.Identity) is built with it', async () => {
  const replaced = await estimateFixture('library-models-set8/resnet_small_image_stem.py');
  const plain = await estimateText(readFixture('library-models-set8/resnet_small_image_stem.py')
    .replace(/^model\.(conv1|maxpool) = .*$/gm, ''), '/tmp/resnet_plain_stem.py');
  assert.equal(replaced.detected.model.name, 'resnet18');
  // resnet18 with 10 classes has 11,181,642 parameters; the 3x3 conv1 has 1,728 weights where the 7x7 had 9,408.
  assert.equal(plain.detected.parameters, 11_181_642);
  assert.equal(replaced.detected.parameters, 11_181_642 - 9_408 + 1_728);
  // Every stage now runs at 16 times the area, as the library's stem would run them on 128 px images; only the stem
  // itself keeps less than it would there.
  const plainAt128 = await estimateText(readFixture('library-models-set8/resnet_small_image_stem.py')
    .replace(/^model\.(conv1|maxpool) = .*$/gm, '').replace('128, 3, 32, 32', '128, 3, 128, 128'), '/tmp/resnet_plain_stem_128.py');
  const ratio = replaced.breakdown!.activations / plain.breakdown!.activations;
  const against128 = replaced.breakdown!.activations / plainAt128.breakdown!.activations;
  assert.ok(ratio > 8, `activations ratio ${ratio}`);
  assert.ok(against128 > 0.6 && against128 < 1, `against 128 px ${against128}`);
});

test('Lightning\'s save_hyperparameters(): self.hparams holds the constructor\'s arguments, read by configure_optimizers', async () => {
  const r = await estimateFixture('library-models-set8/lightning_hparams_stem.py');
  assert.equal(r.detected.model.name, 'resnet18');
  assert.equal(r.detected.optimizer.value, 'sgd-momentum');
  // The stem set inside the module's __init__ is the one built.
  assert.equal(r.detected.parameters, 11_181_642 - 9_408 + 1_728 + 90 * 513);
});

test('a Swin block\'s no-grad forward under autocast holds its residual stream, norms and softmax in fp32', async () => {
  const spec = findVisionModel('swin_t')!.build(224, 1000);
  assert.equal(spec.kind, 'layers');
  if (spec.kind !== 'layers') return;
  // Stage 1 (C 96, 3 heads of 7x7 windows: P 147 probabilities a token, 56 x 56 tokens) at the softmax: fp32 block
  // input, norm1 output and its partitioned copy (12 C bytes), half qkv and scaled q (8 C), half scores (2 P), the
  // fp32 copy softmax makes of them and its fp32 output (8 P).
  assert.equal(spec.autocastInferenceLiveBytesPerSample, (12 * 96 + 8 * 96 + 2 * 147 + 8 * 147) * 56 * 56);
  // In fp32: input, norm1, partitioned copy, qkv, q (7 C) and scores and probabilities (2 P), in elements.
  assert.equal(spec.inferenceLiveElementsPerSample, (7 * 96 + 2 * 147) * 56 * 56);
  const r = await estimateFixture('library-models-set8/swin_t_bf16_inference.py');
  assert.equal(r.detected.model.name, 'swin_t');
  // The forward's live bytes for 64 images, beside the weights and their cached half copies.
  const live = 64 * spec.autocastInferenceLiveBytesPerSample!;
  assert.ok(r.breakdown!.activations >= live * 0.95, `${r.breakdown!.activations} vs ${live}`);
});

test('a module holding a timm image tower beside a hub text tower trains both: the second tower is counted too', async () => {
  const text = readFixture('library-models-set8/two_tower_timm_hub.py');
  const both = await estimateText(text, '/tmp/two_tower.py');
  const textOnly = await estimateText(text.replace(/^ {8}self\.image_tower = .*$/m, ''), '/tmp/text_tower_only.py');
  const vitTiny = findVisionModel('vit_tiny_patch16_224')!.build(224, 0);
  const towerParameters = vitTiny.kind === 'transformer' ? countTransformerParameters(vitTiny).total : 0;
  assert.equal(both.detected.model.name, 'bert-base-uncased');
  assert.equal(both.detected.parameters, textOnly.detected.parameters + towerParameters);
  assert.ok(both.assumptions.some((a) => a.startsWith('vit_tiny_patch16_224 (line 12) is trained in the same step as bert-base-uncased')));
  // Its fp32 weights, gradients and two AdamW moments (16 bytes a parameter), and the activations of 32 images on top.
  assert.ok(both.peakAllocated - textOnly.peakAllocated > 16 * towerParameters + 32 * 197 * 192 * 12 * 4, `${both.peakAllocated - textOnly.peakAllocated}`);
});

test('a detector given min_size / max_size resizes the images to them, not to its default 800 / 1333', async () => {
  const text = readFixture('library-models-set8/detector_transform_sizes.py');
  const given = await estimateText(text, '/tmp/detector_sizes.py');
  const defaults = await estimateText(text.replace(', min_size=512, max_size=900', ''), '/tmp/detector_default_sizes.py');
  // 600 x 800 scaled by min(512 / 600, 900 / 800): 512 x 682, padded to multiples of 32.
  assert.ok(given.assumptions.some((a) => a.includes('to 512x682 and pads the batch to 512x704') && a.includes('min_size 512, max_size 900')), given.assumptions.join('\n'));
  assert.ok(defaults.assumptions.some((a) => a.includes('min_size 800, max_size 1333')));
  assert.ok(given.breakdown!.activations < 0.6 * defaults.breakdown!.activations);
});
