// timm families the catalog lacked (issue #13, set 12): EdgeNeXt first. Each is checked by its parameter count
// (timm's model cards, or a count measured on the H200) and by a script that names it resolving through timm.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';
import { findVisionModel } from '../../server/src/estimator/catalog/vision';
import { countTransformerParameters } from '../../server/src/estimator/transformer';
import type { TransformerSpec } from '../../server/src/estimator/types';

function parametersOf(name: string, imageSize: number, classes: number): number {
  const spec = findVisionModel(name)!.build(imageSize, classes);
  assert.equal(spec.kind, 'layers', name);
  return (spec as { parameters: number }).parameters;
}

function trainingScript(create: string, batch: number, imageSize: number): string {
  return `import timm\nimport torch\nmodel = timm.create_model(${create}).cuda()\n` +
    'opt = torch.optim.AdamW(model.parameters(), lr=1e-3)\nfor step in range(3):\n' +
    `    x = torch.randn(${batch}, 3, ${imageSize}, ${imageSize}, device="cuda")\n` +
    '    loss = model(x).logsumexp(-1).mean()\n    opt.zero_grad()\n    loss.backward()\n    opt.step()\n';
}

test('EdgeNeXt: timm\'s published counts (1.33M, 2.34M, 5.59M, 18.51M) and the 101-class small one measured on the H200', () => {
  assert.equal(Math.round(parametersOf('edgenext_xx_small', 256, 1000) / 10_000), 133);
  assert.equal(Math.round(parametersOf('edgenext_x_small', 256, 1000) / 10_000), 234);
  assert.equal(Math.round(parametersOf('edgenext_small', 256, 1000) / 10_000), 559);
  assert.equal(Math.round(parametersOf('edgenext_base', 256, 1000) / 10_000), 1851);
  // timm.create_model("edgenext_small", num_classes=101): sum(p.numel()) on the H200 (holdout12 results/h200.json).
  assert.equal(parametersOf('edgenext_small', 256, 101), 5_312_637);
  // The positions' 1x1 convolution reads a fixed 64-channel encoding: the count does not follow the image size.
  assert.equal(parametersOf('edgenext_small', 320, 101), 5_312_637);
});

test('EdgeNeXt keeps more per image where the image is larger, and a wider one more', () => {
  const at = (size: number) => (findVisionModel('edgenext_small')!.build(size, 1000) as { savedElementsPerSample: number }).savedElementsPerSample;
  assert.ok(Math.abs(at(512) / at(256) - 4) < 0.05, `${at(512)} / ${at(256)}`);
  const small = findVisionModel('edgenext_small')!.build(256, 1000) as { savedElementsPerSample: number };
  const base = findVisionModel('edgenext_base')!.build(256, 1000) as { savedElementsPerSample: number };
  assert.ok(base.savedElementsPerSample > small.savedElementsPerSample);
});

test('a timm script that trains edgenext_x_small resolves through the catalog, with its classes\' head', async () => {
  const result = await estimateText(trainingScript('"edgenext_x_small", num_classes=10', 32, 256), '/tmp/edgenext.py');
  assert.equal(result.unresolved, undefined);
  assert.equal(result.detected.parameters, parametersOf('edgenext_x_small', 256, 1000) - 990 * 192 - 990);
});

test('MLP-Mixer: timm\'s published counts (b16 59.88M, l16 208.20M); the token MLP\'s size follows the patches', () => {
  assert.equal(parametersOf('mixer_b16_224', 224, 1000), 59_880_472);
  assert.equal(parametersOf('mixer_l16_224', 224, 1000), 208_196_168);
  // 196 patches -> 49 at patch 32: the token MLP (196 x 384 twice, biases) shrinks, the patchify conv grows 4x.
  assert.equal(Math.round(parametersOf('mixer_s32_224', 224, 1000) / 10_000), 1910);
  const saved = (name: string) => (findVisionModel(name)!.build(224, 1000) as { savedElementsPerSample: number }).savedElementsPerSample;
  assert.ok(saved('mixer_b16_224') > 2 * saved('mixer_b32_224'));
});

test('EfficientNet-Lite and TinyNet: timm\'s published counts, to 0.01M', () => {
  const published: Array<[string, number]> = [['efficientnet_lite0', 465], ['efficientnet_lite1', 542], ['efficientnet_lite2', 609],
    ['efficientnet_lite3', 820], ['efficientnet_lite4', 1301], ['tinynet_a', 619], ['tinynet_b', 373], ['tinynet_c', 246], ['tinynet_d', 234], ['tinynet_e', 204]];
  for (const [name, hundredths] of published) assert.equal(Math.round(parametersOf(name, 224, 1000) / 10_000), hundredths, name);
  // timm's mnasnet_100 is torchvision's MNASNet 1.0, layer for layer.
  assert.equal(parametersOf('mnasnet_100', 224, 1000), 4_383_312);
  // Lite0 is B0's blocks without squeeze-excite: B0's count is larger by those modules alone.
  assert.ok(parametersOf('efficientnet_b0', 224, 1000) > parametersOf('efficientnet_lite0', 224, 1000));
});

test('ECA-ResNet-D: ResNet-D plus one small 1-D convolution a bottleneck, whose gate keeps the map it scales', () => {
  // 3+4+6+3 bottlenecks: kernels 5 (256, 512, 1024 channels) and 7 (2048): 3*5 + 4*5 + 6*5 + 3*7 = 86.
  assert.equal(parametersOf('ecaresnet50d', 224, 1000) - parametersOf('resnet50d', 224, 1000), 86);
  assert.equal(Math.round(parametersOf('ecaresnet101d', 224, 1000) / 10_000), 4457);
  const saved = (name: string) => (findVisionModel(name)!.build(224, 1000) as { savedElementsPerSample: number }).savedElementsPerSample;
  // Each bottleneck's third BatchNorm output (256x56x56 .. 2048x7x7 per image) is kept once more.
  const bn3 = 3 * 256 * 56 * 56 + 4 * 512 * 28 * 28 + 6 * 1024 * 14 * 14 + 3 * 2048 * 7 * 7;
  const pooled = 2 * (3 * 256 + 4 * 512 + 6 * 1024 + 3 * 2048);
  assert.equal(saved('ecaresnet50d') - saved('resnet50d'), bn3 + pooled);
});

test('a timm script naming mixer_b16_224, tinynet_a or beit_base_patch16_224 resolves through the catalog', async () => {
  for (const [name, features] of [['mixer_b16_224', 768], ['tinynet_a', 1280]] as const) {
    const result = await estimateText(trainingScript(`"${name}", num_classes=10`, 16, 224), `/tmp/${name}.py`);
    assert.equal(result.unresolved, undefined, name);
    assert.equal(result.detected.parameters, parametersOf(name, 224, 1000) - 990 * features - 990, name);
  }
  const beit = await estimateText(trainingScript('"beit_base_patch16_224", num_classes=10', 16, 224), '/tmp/beit.py');
  assert.equal(beit.unresolved, undefined);
  assert.equal(beit.detected.parameters, 86_530_984 - 990 * 768 - 990);
});

test('BEiT by name: timm\'s published counts (relative position tables sized by the image, no absolute positions, no key bias)', () => {
  const count = (name: string, size: number) => {
    const spec = findVisionModel(name)!.build(size, 1000);
    assert.equal(spec.kind, 'transformer', name);
    return countTransformerParameters(spec as TransformerSpec).total;
  };
  // results-imagenet.csv: 86.53M, 86.74M, 304.43M, 305.00M, 305.67M.
  const published: Array<[string, number, number]> = [['beit_base_patch16_224', 224, 8653], ['beit_base_patch16_384', 384, 8674],
    ['beit_large_patch16_224', 224, 30443], ['beit_large_patch16_384', 384, 30500], ['beit_large_patch16_512', 512, 30567]];
  for (const [name, size, hundredths] of published) assert.equal(Math.round(count(name, size) / 10_000), hundredths, name);
  // Against DeiT-III (the same blocks with layer scale): 197 position rows and 12 key biases fewer, 12 tables of
  // 732 rows x 12 heads more.
  assert.equal(count('beit_base_patch16_224', 224) - count('deit3_base_patch16_224', 224), 12 * 732 * 12 - 12 * 768 - 196 * 768);
  // The plain ViT's count stays as it was.
  assert.equal(count('vit_base_patch16_224', 224), 86_567_656);
});

test('ResNetV2 (pre-activation, BatchNorm): timm\'s published counts; the D variants\' deep stem as in ResNet-D', () => {
  const published: Array<[string, number]> = [['resnetv2_18', 1169], ['resnetv2_18d', 1171], ['resnetv2_34', 2180], ['resnetv2_34d', 2182],
    ['resnetv2_50', 2555], ['resnetv2_101', 4454]];
  for (const [name, hundredths] of published) assert.equal(Math.round(parametersOf(name, 224, 1000) / 10_000), hundredths, name);
  // Against the post-activation ResNet-50: each block's first norm reads its input (in channels) instead of its
  // last one the output, and the shortcuts lose their norms; the final norm is new.
  const norms = (blocks: number[], first: (stage: number, b: number) => number) =>
    blocks.reduce((sum, count, stage) => sum + Array.from({ length: count }, (_, b) => first(stage, b)).reduce((a, c) => a + c, 0), 0);
  const inputs = norms([3, 4, 6, 3], (stage, b) => 2 * (b === 0 ? (stage === 0 ? 64 : 128 * 2 ** stage) : 256 * 2 ** stage));
  const outputs = norms([3, 4, 6, 3], (stage, b) => 2 * 256 * 2 ** stage * (b === 0 ? 2 : 1));
  assert.equal(parametersOf('resnetv2_50', 224, 1000) - parametersOf('resnet50', 224, 1000), inputs - outputs + 2 * 2048 - 2 * 64);
});
