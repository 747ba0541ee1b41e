// timm families the catalog lacked (issue #13, set 13): HRNet and BiT (ResNetV2 with GroupNorm and weight-
// standardized convolutions). Each is checked by timm's published parameter counts (results-imagenet.csv, to
// 0.01M), by how what it keeps grows, and by a script that names it resolving through timm.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';
import { findVisionModel } from '../../server/src/estimator/catalog/vision';
import type { LayerNetSpec } from '../../server/src/estimator/types';

function layers(name: string, imageSize: number, classes: number): LayerNetSpec {
  const spec = findVisionModel(name)!.build(imageSize, classes);
  assert.equal(spec.kind, 'layers', name);
  return spec as LayerNetSpec;
}

function trainingScript(create: string, batch: number, imageSize: number, amp = false): string {
  return `import timm\nimport torch\nmodel = timm.create_model(${create}).cuda()\n` +
    'opt = torch.optim.AdamW(model.parameters(), lr=1e-3)\nfor step in range(3):\n' +
    `    x = torch.randn(${batch}, 3, ${imageSize}, ${imageSize}, device="cuda")\n` +
    `    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=${amp ? 'True' : 'False'}):\n` +
    '        loss = model(x).logsumexp(-1).mean()\n    opt.zero_grad()\n    loss.backward()\n    opt.step()\n';
}

test('HRNet: timm\'s published counts, from w18_small (13.19M) to w64 (128.06M)', () => {
  const published: Array<[string, number]> = [['hrnet_w18_small', 1319], ['hrnet_w18_small_v2', 1560], ['hrnet_w18', 2130], ['hrnet_w30', 3771],
    ['hrnet_w32', 4123], ['hrnet_w40', 5756], ['hrnet_w44', 6706], ['hrnet_w48', 7747], ['hrnet_w64', 12806]];
  for (const [name, hundredths] of published) assert.equal(Math.round(layers(name, 224, 1000).parameters / 10_000), hundredths, name);
  // The head's classifier reads 2048 features whatever the width.
  assert.equal(layers('hrnet_w18', 224, 1000).parameters - layers('hrnet_w18', 224, 10).parameters, 990 * 2048 + 990);
});

test('HRNet keeps four times as much at twice the side, and a wider one more', () => {
  const saved = (name: string, size: number) => layers(name, size, 1000).savedElementsPerSample;
  assert.ok(Math.abs(saved('hrnet_w18', 448) / saved('hrnet_w18', 224) - 4) < 0.05);
  assert.ok(saved('hrnet_w48', 224) > saved('hrnet_w32', 224) && saved('hrnet_w32', 224) > saved('hrnet_w18', 224));
  assert.ok(saved('hrnet_w18', 224) > saved('hrnet_w18_small_v2', 224) && saved('hrnet_w18_small_v2', 224) > saved('hrnet_w18_small', 224));
});

test('BiT: timm\'s published counts (50x1 25.55M .. 152x4 936.53M)', () => {
  const published: Array<[string, number]> = [['resnetv2_50x1_bit', 2555], ['resnetv2_50x3_bit', 21732], ['resnetv2_101x1_bit', 4454],
    ['resnetv2_101x3_bit', 38793], ['resnetv2_152x2_bit', 23634], ['resnetv2_152x4_bit', 93653]];
  for (const [name, hundredths] of published) assert.equal(Math.round(layers(name, 224, 1000).parameters / 10_000), hundredths, name);
});

test('BiT keeps more under autocast than the BatchNorm ResNetV2 of the same shape (GroupNorm runs in fp32), and its standardized weights', () => {
  const bit = layers('resnetv2_50x1_bit', 224, 1000);
  const bn = layers('resnetv2_50', 224, 1000);
  assert.equal(bit.parameters, bn.parameters);
  assert.ok((bit.autocastSavedBytesPerSample ?? 0) > (bn.autocastSavedBytesPerSample ?? 2 * bn.savedElementsPerSample));
  // Every convolution's standardized weight: all the parameters but the classifier's and the norms' (a few 10,000s).
  const convolutions = bit.parameters - (2048 * 1000 + 1000);
  assert.ok(bit.reparametrizedWeightElements! < convolutions && bit.reparametrizedWeightElements! > 0.99 * convolutions, String(bit.reparametrizedWeightElements));
});

test('timm scripts that name hrnet_w18 and resnetv2_50x1_bit resolve through the catalog, with their classes\' heads', async () => {
  const hr = await estimateText(trainingScript('"hrnet_w18", num_classes=312', 64, 224, true), '/tmp/hrnet.py');
  assert.equal(hr.unresolved, undefined);
  assert.equal(hr.detected.model?.name, 'hrnet_w18');
  assert.equal(hr.detected.parameters, layers('hrnet_w18', 224, 312).parameters);
  const bit = await estimateText(trainingScript('"resnetv2_50x1_bit", num_classes=21', 32, 224), '/tmp/bit.py');
  assert.equal(bit.detected.parameters, layers('resnetv2_50x1_bit', 224, 21).parameters);
});

test('a `.goog_in21k` tag without num_classes builds the ImageNet-21k head (21,843 classes), as timm\'s pretrained config does', async () => {
  const tagged = await estimateText(trainingScript('"resnetv2_50x1_bit.goog_in21k"', 8, 224), '/tmp/bit21k.py');
  assert.equal(tagged.detected.parameters, layers('resnetv2_50x1_bit', 224, 21_843).parameters);
  const given = await estimateText(trainingScript('"resnetv2_50x1_bit.goog_in21k", num_classes=5', 8, 224), '/tmp/bit5.py');
  assert.equal(given.detected.parameters, layers('resnetv2_50x1_bit', 224, 5).parameters);
});

test('what HRNet and BiT keep after forward, against the H200 (probe_resolve13: kept_mib over the step\'s base)', () => {
  // [name, batch, side, autocast, MiB measured]
  const measured: Array<[string, number, number, boolean, number]> = [['hrnet_w18', 32, 224, false, 3868.48], ['hrnet_w32', 16, 256, false, 3431.41],
    ['hrnet_w48', 16, 224, false, 3477.79], ['resnetv2_50x1_bit', 32, 224, false, 2452.04], ['resnetv2_50x1_bit', 32, 224, true, 3019.1],
    ['resnetv2_50x1_bit', 48, 320, true, 9122.76], ['resnetv2_50x3_bit', 8, 224, false, 2588.5]];
  for (const [name, batch, side, autocast, mib] of measured) {
    const spec = layers(name, side, 21);
    const perSample = autocast ? spec.autocastSavedBytesPerSample ?? 2 * spec.savedElementsPerSample : 4 * spec.savedElementsPerSample;
    // The convolutions' standardized weights (BiT), and under autocast every weight's half copy.
    const weights = (spec.reparametrizedWeightElements ?? 0) * (autocast ? 2 : 4) + (autocast ? 2 * spec.castParameters : 0);
    const ours = (batch * (perSample + spec.fixedBytesPerSample) + weights) / 2 ** 20;
    assert.ok(Math.abs(ours / mib - 1) < 0.05, `${name} ${batch}x${side}${autocast ? ' autocast' : ''}: ${ours.toFixed(0)} MiB, measured ${mib}`);
  }
});
