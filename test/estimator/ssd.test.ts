// torchvision's SSD300-VGG16 and SSDlite320-MobileNetV3-Large (catalog/detection.ts, ssdNet), checked against the
// H200: test/gpu/estimator/probe_ssd.py (results/ssd.json) and probe_frozen.py's SSD rows (results/frozen.json).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { estimateText, MIB, repoRoot } from './helpers';
import { detectionInputSize, detectorNet, findDetectionModel } from '../../server/src/estimator/catalog/detection';
import type { LayerNetSpec } from '../../server/src/estimator/types';

interface Row {
  model: string; mode: string; batch: number; h: number; w: number; num_classes: number; amp?: boolean; imagenet_structure?: boolean;
  params?: number; trainable?: number; peak?: number; step_peaks?: number[]; error?: string;
}

const results = (name: string): { runs: Row[]; params: Record<string, [number, number]> } =>
  JSON.parse(fs.readFileSync(path.join(repoRoot, 'test', 'gpu', 'estimator', 'results', name), 'utf8'));

/** The probe's step as a user writes it: SGD with momentum over a list of images and targets, or a no-grad loop. */
function rowScript(r: Row): string {
  // weights_backbone=None builds what the probe built; left out, the default ImageNet backbone's structure.
  const args = r.imagenet_structure ? `weights=None, num_classes=${r.num_classes}` : `weights=None, weights_backbone=None, num_classes=${r.num_classes}`;
  const forward = r.mode === 'train' ? 'losses = model(images, targets)' : 'out = model(images)';
  const step = r.amp ? ['    with torch.autocast("cuda", dtype=torch.float16):', `        ${forward}`] : [`    ${forward}`];
  const body = r.mode === 'train'
    ? ['opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)', 'model.train()', 'for step in range(3):',
      `    images = [torch.rand(3, ${r.h}, ${r.w}, device="cuda") for _ in range(BATCH)]`,
      '    targets = [{"boxes": torch.tensor([[10.0, 20.0, 200.0, 240.0]], device="cuda"), "labels": torch.tensor([1], device="cuda")} for _ in range(BATCH)]',
      '    opt.zero_grad()', ...step, '    loss = sum(losses.values())', '    loss.backward()', '    opt.step()']
    : ['model.eval()', 'with torch.no_grad():', '  for step in range(3):',
      `    images = [torch.rand(3, ${r.h}, ${r.w}, device="cuda") for _ in range(BATCH)]`, ...step.map((line) => `  ${line}`)];
  return ['import torch', `from torchvision.models.detection import ${r.model}`, `model = ${r.model}(${args}).cuda()`, `BATCH = ${r.batch}`, ...body].join('\n');
}

async function rowError(r: Row): Promise<{ error: number; label: string; estimate: number; measured: number; parameters: number; trainable?: number }> {
  const result = await estimateText(rowScript(r), '/tmp/ssd_row.py');
  assert.equal(result.unresolved, undefined);
  const measured = r.peak ?? Math.max(...(r.step_peaks ?? [0]));
  const label = `${r.model} ${r.mode} b${r.batch} ${r.h}x${r.w} K=${r.num_classes}${r.amp ? ' fp16' : ''}${r.imagenet_structure ? ' imagenet-structure' : ''}`;
  return { error: result.peakAllocated / (measured * MIB) - 1, label, estimate: result.peakAllocated / MIB, measured, parameters: result.detected.parameters,
    trainable: result.detected.trainableParameters };
}

/** The rows the one measured constant was read from (VGG_EVAL_CONV1_MAPS, from the b16 evaluation's backbone part); the rest validate. */
const CALIBRATION = new Set(['ssd300_vgg16 train b16 480x640 K=91', 'ssd300_vgg16 eval b16 480x640 K=91',
  'ssdlite320_mobilenet_v3_large train b64 480x640 K=91', 'ssdlite320_mobilenet_v3_large eval b32 480x640 K=91']);

const options = (classes: number) => ({ classes, frozenNorms: false, pretrained: false, detections: false });
/** A net's parameters as the probe records them: [total, trainable]. */
const counted = (net: LayerNetSpec): [number, number] => [net.parameters, net.parameters - (net.frozenPrefix?.parameters ?? 0)];

test('parameter counts are torchvision\'s: 91, 21 and 2 classes, with and without the ImageNet backbone\'s structure', () => {
  const ssd = findDetectionModel('ssd300_vgg16')!;
  const lite = findDetectionModel('ssdlite320_mobilenet_v3_large')!;
  const counts = results('ssd.json').params;
  for (const classes of [91, 21, 2]) {
    assert.deepEqual(counted(detectorNet(ssd, 300, 300, options(classes))), counts[`ssd300_vgg16/${classes}`]);
    // Over ImageNet backbone weights SSD300 freezes conv1_1 and conv1_2 (trainable_backbone_layers=4).
    assert.deepEqual(counted(detectorNet(ssd, 300, 300, { ...options(classes), trainableLayers: 4 })), counts[`ssd300_vgg16/${classes}/imagenet-structure`]);
    assert.deepEqual(counted(detectorNet(lite, 320, 320, options(classes))), counts[`ssdlite320_mobilenet_v3_large/${classes}`]);
    // ImageNet weights keep MobileNetV3's full-width last stage; none (or COCO weights) build the reduced tail.
    assert.deepEqual(counted(detectorNet(lite, 320, 320, { ...options(classes), imagenetBackbone: true })), counts[`ssdlite320_mobilenet_v3_large/${classes}/imagenet-structure`]);
  }
});

test('the transform resizes every image to the fixed square: no padding, whatever the size', () => {
  const ssd = findDetectionModel('ssd300_vgg16')!;
  assert.deepEqual(detectionInputSize(ssd, 480, 640), { height: 300, width: 300, paddedHeight: 300, paddedWidth: 300 });
  assert.deepEqual(detectionInputSize(findDetectionModel('ssdlite320_mobilenet_v3_large')!, 1080, 1920), { height: 320, width: 320, paddedHeight: 320, paddedWidth: 320 });
});

test('every SSD row measured on the H200: within 8% in training, under fp16 autocast, with a frozen stage and in no-grad evaluation', async () => {
  const rows = [...results('ssd.json').runs, ...results('frozen.json').runs.filter((r) => r.model.startsWith('ssd'))];
  let validated = 0;
  for (const r of rows) {
    assert.equal(r.error, undefined);
    const e = await rowError(r);
    assert.equal(e.parameters, r.params, e.label);
    if (r.mode === 'train') assert.equal(e.trainable, r.trainable, e.label);
    assert.ok(Math.abs(e.error) < 0.08, `${e.label}: ${(e.error * 100).toFixed(1)}%`);
    if (!CALIBRATION.has(e.label)) validated++;
  }
  assert.equal(validated, rows.length - CALIBRATION.size);
  assert.ok(validated >= 13, `${validated} validation rows`);
});

const fineTune = (height: number, width: number): string => [
  'import torch',
  'from torch.utils.data import DataLoader, Dataset',
  'from torchvision.models.detection import ssdlite320_mobilenet_v3_large',
  'class Crops(Dataset):',
  '    def __len__(self):',
  '        return 1000',
  '    def __getitem__(self, i):',
  `        image = torch.rand(3, ${height}, ${width})`,
  '        return image, {"boxes": torch.tensor([[4.0, 8.0, 96.0, 120.0]]), "labels": torch.tensor([2])}',
  'model = ssdlite320_mobilenet_v3_large(weights_backbone="DEFAULT", num_classes=6).cuda()',
  'loader = DataLoader(Crops(), batch_size=48, shuffle=True, collate_fn=lambda batch: tuple(zip(*batch)))',
  'opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)',
  'model.train()',
  'for images, targets in loader:',
  '    images = [image.cuda() for image in images]',
  '    targets = [{k: v.cuda() for k, v in t.items()} for t in targets]',
  '    loss = sum(model(images, targets).values())',
  '    opt.zero_grad()',
  '    loss.backward()',
  '    opt.step()',
].join('\n');

test('SSDlite fine-tuned from a Dataset: the network keeps the same at any image size, only the images themselves grow', async () => {
  const small = await estimateText(fineTune(512, 512), '/tmp/ssdlite_small.py');
  const large = await estimateText(fineTune(1024, 1024), '/tmp/ssdlite_large.py');
  assert.equal(small.unresolved, undefined);
  assert.equal(small.config.batchSize, 48);
  // ImageNet backbone weights: the full-width last stage, BatchNorm2d everywhere, every stage trained (6 by default).
  assert.equal(small.detected.parameters, detectorNet(findDetectionModel('ssdlite320_mobilenet_v3_large')!, 320, 320, { ...options(6), imagenetBackbone: true }).parameters);
  assert.equal(small.detected.trainableParameters, small.detected.parameters);
  assert.ok(small.assumptions.some((a) => /512x512 images to 320x320 \(fixed_size\)/.test(a)), small.assumptions.join('\n'));
  assert.ok(small.assumptions.some((a) => /log-softmax of every anchor/.test(a)));
  assert.equal(large.breakdown.activations, small.breakdown.activations);
  // The step's images, fp32: 48 x 3 x (1024^2 - 512^2) x 4 bytes more.
  assert.equal(large.peakAllocated - small.peakAllocated, 48 * 3 * (1024 * 1024 - 512 * 512) * 4);
});

test('SSD300 over the default ImageNet backbone: trainable_backbone_layers freezes VGG16\'s lower stages, which record nothing', async () => {
  const script = (args: string): string => ['import torch', 'import torchvision',
    `model = torchvision.models.detection.ssd300_vgg16(${args}).cuda()`,
    'opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=1e-3, momentum=0.9)', 'model.train()', 'for step in range(100):',
    '    images = [torch.rand(3, 375, 500, device="cuda") for _ in range(24)]',
    '    targets = [{"boxes": torch.tensor([[1.0, 2.0, 50.0, 60.0]], device="cuda"), "labels": torch.tensor([3], device="cuda")} for _ in range(24)]',
    '    loss = sum(model(images, targets).values())', '    opt.zero_grad()', '    loss.backward()', '    opt.step()'].join('\n');
  const scratch = await estimateText(script('weights=None, weights_backbone=None, num_classes=21'), '/tmp/ssd_scratch.py');
  const two = await estimateText(script('num_classes=21, trainable_backbone_layers=2'), '/tmp/ssd_tbl2.py');
  assert.equal(two.detected.parameters, 26_285_486);
  // conv1_x 38,720 + conv2_x 221,440 + conv3_x 1,475,328 frozen.
  assert.equal(two.detected.trainableParameters, 26_285_486 - 1_735_488);
  assert.ok(two.assumptions.some((a) => /only its top 2 of 5 stages train/.test(a)), two.assumptions.join('\n'));
  assert.ok(!scratch.assumptions.some((a) => /stages train/.test(a)));
  assert.ok(two.breakdown.activations < 0.75 * scratch.breakdown.activations, `${two.breakdown.activations / MIB} vs ${scratch.breakdown.activations / MIB} MiB`);
  // trainable_backbone_layers=0: all of VGG16 frozen, conv5_3 too (it runs inside the first extra block).
  const none = detectorNet(findDetectionModel('ssd300_vgg16')!, 300, 300, { ...options(21), trainableLayers: 0 });
  assert.equal(none.frozenPrefix?.parameters, 14_714_688);
  // SSDlite: all of MobileNetV3 frozen, the extra blocks and heads train.
  const lite = findDetectionModel('ssdlite320_mobilenet_v3_large')!;
  const liteNone = detectorNet(lite, 320, 320, { ...options(21), trainableLayers: 0 });
  assert.ok((liteNone.frozenPrefix?.parameters ?? 0) > 0 && liteNone.savedElementsPerSample < 0.1 * detectorNet(lite, 320, 320, options(21)).savedElementsPerSample);
});

test('SSD300 in evaluation on images the script does not size: resolved at 300x300, said', async () => {
  const text = ['import torch', 'from torchvision.models.detection import ssd300_vgg16, SSD300_VGG16_Weights',
    'model = ssd300_vgg16(weights=SSD300_VGG16_Weights.COCO_V1).cuda().eval()', 'def predict(batch):', '    with torch.no_grad():',
    '        return model([image.cuda() for image in batch])', 'for batch in stream():', '    detections = predict(batch)'].join('\n');
  const result = await estimateText(text, '/tmp/ssd_eval.py');
  assert.equal(result.unresolved, undefined);
  assert.equal(result.detected.parameters, 35_641_826);
  assert.ok(result.assumptions.some((a) => /counted at 300x300/.test(a)), result.assumptions.join('\n'));
  assert.ok(result.assumptions.some((a) => /top-k per class/.test(a)), result.assumptions.join('\n'));
});

test('SSD300 fine-tuned with a new classification head (the tutorials\' shape): sized for the head\'s classes', async () => {
  const text = ['import torch', 'import torchvision', 'from torchvision.models.detection import _utils',
    'from torchvision.models.detection.ssd import SSDClassificationHead', 'NUM_CLASSES = 3',
    'model = torchvision.models.detection.ssd300_vgg16(weights="COCO_V1")',
    'in_channels = _utils.retrieve_out_channels(model.backbone, (300, 300))',
    'num_anchors = model.anchor_generator.num_anchors_per_location()',
    'model.head.classification_head = SSDClassificationHead(in_channels=in_channels, num_anchors=num_anchors, num_classes=NUM_CLASSES)',
    'model = model.cuda()', 'opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)', 'model.train()', 'for step in range(100):',
    '    images = [torch.rand(3, 300, 300, device="cuda") for _ in range(16)]',
    '    targets = [{"boxes": torch.tensor([[1.0, 2.0, 50.0, 60.0]], device="cuda"), "labels": torch.tensor([1], device="cuda")} for _ in range(16)]',
    '    loss = sum(model(images, targets).values())', '    opt.zero_grad()', '    loss.backward()', '    opt.step()'].join('\n');
  const result = await estimateText(text, '/tmp/ssd_head.py');
  assert.equal(result.unresolved, undefined);
  assert.equal(result.detected.parameters, detectorNet(findDetectionModel('ssd300_vgg16')!, 300, 300, options(3)).parameters);
});
