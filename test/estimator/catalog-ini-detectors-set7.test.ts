// What held-out set 7 showed about library models and where their settings come from: newer timm / torchvision
// families by name (ConvNeXt V2, Swin V2, SE-ResNeXt-101), settings in an INI file read with configparser, a
// segmentation model's no-grad inference whose outputs no loss reads, and a detector fed images whose sizes are
// drawn at random per image.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { findVisionModel } from '../../server/src/estimator/catalog/vision';
import { drawnInputSize, findDetectionModel } from '../../server/src/estimator/catalog/detection';
import type { LayerNetSpec } from '../../server/src/estimator/types';
import { estimateText } from './helpers';

const layers = (name: string, size: number, classes: number): LayerNetSpec => {
  const spec = findVisionModel(name)!.build(size, classes);
  assert.equal(spec.kind, 'layers', name);
  return spec as LayerNetSpec;
};

test('ConvNeXt V2, Swin V2 and the deeper SE-ResNeXts are built by name with their published parameter counts', () => {
  // Counted with 1000 classes; timm and torchvision publish them (to 0.01M for timm).
  const expected: Array<[string, number]> = [
    ['convnextv2_atto', 3_708_400], ['convnextv2_nano', 15_623_800], ['convnextv2_tiny', 28_635_496], ['convnextv2_base', 88_717_800],
    ['swin_v2_t', 28_351_570], ['swin_v2_s', 49_737_442], ['swin_v2_b', 87_930_848],
    ['seresnext101_32x4d', 48_955_416], ['seresnet152', 66_821_848],
  ];
  for (const [name, count] of expected) assert.equal(layers(name, 224, 1000).parameters, count, name);
  // A smaller head changes only the classifier: 768 x 38 + 38 in place of 768 x 1000 + 1000.
  assert.equal(layers('convnextv2_tiny', 224, 38).parameters, 28_635_496 - 768 * 962 - 962);
  // timm names resolve with a pretrained tag too.
  assert.equal(findVisionModel('convnextv2_nano.fcmae_ft_in22k_in1k')?.names[0], 'convnextv2_nano');
});

test('a ConvNeXt V2 block keeps more than a V1 block of the same widths (the response norm keeps its input and product)', () => {
  const v1 = layers('convnext_tiny', 224, 1000);
  const v2 = layers('convnextv2_tiny', 224, 1000);
  assert.ok(v2.savedElementsPerSample > 1.2 * v1.savedElementsPerSample, `${v2.savedElementsPerSample} vs ${v1.savedElementsPerSample}`);
  // Under autocast the product is fp32: more bytes than twice the elements.
  assert.ok((v2.autocastSavedBytesPerSample ?? 0) > 2 * v2.savedElementsPerSample);
});

test('Swin V2 is built for its own 256 px and 8x8 windows, and keeps more a token than V1 (cosine attention)', () => {
  const v2 = findVisionModel('swin_v2_t')!;
  assert.equal(v2.imageSize, 256);
  const perToken = (spec: LayerNetSpec, size: number) => spec.savedElementsPerSample / (size * size);
  assert.ok(perToken(layers('swin_v2_t', 256, 1000), 256) > perToken(layers('swin_t', 256, 1000), 256));
});

test('a timm model and its sizes named in an INI file that configparser reads next to the script', async () => {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'oomguard-ini-'));
  fs.mkdirSync(path.join(folder, 'settings'));
  fs.writeFileSync(path.join(folder, 'settings', 'run.cfg'), [
    '# flowers, small run',
    '[DEFAULT]',
    'side = 192',
    '',
    '[network]',
    'arch = convnextv2_nano',
    'Classes = 102',
    '',
    '[loader]',
    'batch: 40',
    'crop = %(side)s',
    'amp = on',
    '',
  ].join('\n'));
  const script = [
    'import os, configparser',
    'import timm, torch',
    'ini = configparser.ConfigParser()',
    'ini.read(os.path.join(os.path.dirname(os.path.abspath(__file__)), "settings", "run.cfg"))',
    'net_cfg = ini["network"]',
    'model = timm.create_model(net_cfg.get("arch"), num_classes=net_cfg.getint("classes")).cuda()',
    'bs = ini.getint("loader", "batch")',
    'crop = ini["loader"].getint("crop")',
    'use_amp = ini.getboolean("loader", "amp", fallback=False)',
    'opt = torch.optim.AdamW(model.parameters())',
    'for _ in range(3):',
    '    x = torch.randn(bs, 3, crop, crop, device="cuda")',
    '    y = torch.randint(0, 102, (bs,), device="cuda")',
    '    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=use_amp):',
    '        loss = torch.nn.functional.cross_entropy(model(x), y)',
    '    loss.backward()',
    '    opt.step()',
    '    opt.zero_grad()',
  ].join('\n');
  const result = await estimateText(script, path.join(folder, 'train.py'));
  assert.equal(result.detected.model?.name, 'convnextv2_nano');
  assert.equal(result.detected.parameters, layers('convnextv2_nano', 192, 102).parameters);
  assert.deepEqual([result.detected.batchSize?.value, result.detected.batchSize?.how], [40, 'config']);
  assert.equal(result.detected.imageSize?.value, 192);
  assert.equal(result.unresolved, undefined);

  // The file missing: the name is not a value the script determines, and nothing stands in for it.
  const missing = await estimateText(script.replace('run.cfg', 'absent.cfg'), path.join(folder, 'train.py'));
  assert.match(missing.unresolved?.reason ?? '', /not a value the script determines/);
});

/** A torchvision segmentation model run under no_grad in half precision over batches of tiles, masks kept on the CPU. */
function segmentationInference(builder: string, classes: number, side: number): string {
  return [
    'import torch',
    `from torchvision.models.segmentation import ${builder}`,
    `net = ${builder}(weights=None, weights_backbone=None, num_classes=${classes}).cuda().half().eval()`,
    'masks = []',
    'with torch.no_grad():',
    '    for _ in range(4):',
    `        tiles = torch.rand(16, 3, ${side}, ${side}, device="cuda").half()`,
    '        pred = net(tiles)["out"]',
    '        masks.append(pred.argmax(1).byte().cpu())',
  ].join('\n');
}

test('no-grad segmentation inference whose outputs no loss reads: the previous outputs and this forward\'s live peak, no loss', async () => {
  for (const [builder, classes, side] of [['deeplabv3_mobilenet_v3_large', 21, 480], ['lraspp_mobilenet_v3_large', 6, 320]] as const) {
    const result = await estimateText(segmentationInference(builder, classes, side), `/tmp/${builder}_tiles.py`);
    assert.equal(result.detected.mode?.value, 'infer-no-grad');
    const spec = layers(builder, side, classes);
    // Half precision: 2 bytes a value. The previous batch's logits live while this forward runs; its live peak
    // already holds this batch's logits where the upsampling makes them; no fp32 loss over them is made.
    const outputs = 16 * classes * side * side * 2;
    assert.equal(result.breakdown.activations, outputs + 16 * spec.inferenceLiveElementsPerSample * 2, builder);
  }
});

test('a detector fed images drawn at random sizes per image is sized for a batch of the extreme shapes', async () => {
  const fcos = findDetectionModel('fcos_resnet50_fpn')!;
  // Heights 900, widths 600..900: the narrowest image (900x600) resizes to 1200x800.
  assert.deepEqual(drawnInputSize(fcos, 900, 900, { height: 900, width: 600 }), { height: 1200, width: 800, paddedHeight: 1216, paddedWidth: 800 });
  // Both drawn: a 900x600 and a 600x900 image in one batch pad it to 1200 both ways.
  assert.deepEqual(drawnInputSize(fcos, 900, 900, { height: 600, width: 600 }), { height: 1200, width: 1200, paddedHeight: 1216, paddedWidth: 1216 });
  // max_size caps the long side: 300..900 would be 2400, held at 1333.
  assert.equal(drawnInputSize(fcos, 900, 900, { height: 300, width: 300 }).height, 1333);
  const script = (size: string) => [
    'import random, torch',
    'from torch.utils.data import Dataset, DataLoader',
    'from torchvision.models.detection import retinanet_resnet50_fpn',
    'class Boxes(Dataset):',
    '    def __len__(self):',
    '        return 64',
    '    def __getitem__(self, i):',
    `        h, w = ${size}`,
    '        return torch.rand(3, h, w), {"boxes": torch.tensor([[4.0, 4.0, 50.0, 60.0]]), "labels": torch.tensor([1])}',
    'detector = retinanet_resnet50_fpn(weights=None, weights_backbone=None, num_classes=5).cuda()',
    'opt = torch.optim.SGD(detector.parameters(), lr=0.01)',
    'for images, targets in DataLoader(Boxes(), batch_size=4, collate_fn=lambda b: tuple(zip(*b))):',
    '    images = [im.cuda() for im in images]',
    '    targets = [{k: v.cuda() for k, v in t.items()} for t in targets]',
    '    loss = sum(detector(images, targets).values())',
    '    opt.zero_grad()',
    '    loss.backward()',
    '    opt.step()',
  ].join('\n');
  const drawn = await estimateText(script('random.randint(600, 900), random.randint(600, 900)'), '/tmp/det_drawn.py');
  const fixed = await estimateText(script('900, 900'), '/tmp/det_fixed.py');
  // The net is built at the padded batch's size.
  const built = (result: typeof drawn): [number, number | undefined] => {
    const input = (result.config.model as LayerNetSpec).input;
    assert.equal(input.kind, 'image');
    return input.kind === 'image' ? [input.size, input.width] : [0, 0];
  };
  assert.deepEqual(built(drawn), [1216, 1216]);
  assert.deepEqual(built(fixed), [800, 800]);
  assert.ok(drawn.assumptions.some((a) => a.includes('600..900 x 600..900') && a.includes('1216x1216')), drawn.assumptions.join('\n'));
  // (1216 x 1216) / (800 x 800) = 2.3 times the pixels: the activations follow.
  assert.ok(drawn.breakdown!.activations > 2 * fixed.breakdown!.activations);
});
