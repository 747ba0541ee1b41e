// timm families the catalog lacked (issue #13, set 12): EdgeNeXt first. Each is checked by its parameter count
// (timm's model cards, or a count measured on the H200) and by a script that names it resolving through timm.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';
import { findVisionModel } from '../../server/src/estimator/catalog/vision';

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
