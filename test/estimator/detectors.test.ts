// torchvision's detectors as layer nets at the size their transform resizes the images to (catalog/detection.ts).
// Parameter counts are torchvision's; the peaks are the H200's (test/gpu/holdout4/results/h200.json).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { estimateText, MIB, repoRoot } from './helpers';
import { DETECTION_CATALOG, detectionInputSize, detectorNet, findDetectionModel } from '../../server/src/estimator/catalog/detection';

const script = (builder: string, args: string, body: string[]): string => [
  'import torch',
  `from torchvision.models.detection import ${builder}`,
  `model = ${builder}(${args}).cuda()`,
  ...body,
].join('\n');

const evalLoop = (height: number, width: number, batch: number): string[] => [
  `BATCH = ${batch}`,
  'model.eval()',
  'with torch.no_grad():',
  '    for _ in range(3):',
  `        out = model([torch.rand(3, ${height}, ${width}, device="cuda") for _ in range(BATCH)])`,
];

test('parameter counts: torchvision\'s published figures (pretrained backbone, frozen norms) and as built without backbone weights', () => {
  for (const model of DETECTION_CATALOG) {
    assert.equal(detectorNet(model, 800, 800, { classes: model.defaultClasses, frozenNorms: true, pretrained: true, detections: false }).parameters, model.publishedParameters, model.names[0]);
  }
  // Measured on the H200 (holdout4): BatchNorm2d trainable without backbone weights.
  assert.equal(detectorNet(findDetectionModel('retinanet_resnet50_fpn')!, 800, 1216, { classes: 91, frozenNorms: false, pretrained: false, detections: false }).parameters, 34_068_119);
  assert.equal(detectorNet(findDetectionModel('fasterrcnn_mobilenet_v3_large_fpn')!, 800, 1088, { classes: 21, frozenNorms: false, pretrained: false, detections: false }).parameters, 19_052_004);
  // probe_detection.py's counts (random init, BatchNorm2d): v2's norms are never frozen, so its figure is the same.
  const measured: Array<[string, number, number]> = [['fasterrcnn_resnet50_fpn', 91, 41_808_406], ['fasterrcnn_resnet50_fpn', 2, 41_352_281],
    ['maskrcnn_resnet50_fpn', 21, 44_077_773], ['keypointrcnn_resnet50_fpn', 2, 59_190_378], ['retinanet_resnet50_fpn', 21, 32_615_969],
    ['fasterrcnn_resnet50_fpn_v2', 91, 43_712_278], ['maskrcnn_resnet50_fpn_v2', 2, 45_880_411], ['fasterrcnn_mobilenet_v3_large_320_fpn', 2, 18_954_629]];
  for (const [name, classes, count] of measured) {
    assert.equal(detectorNet(findDetectionModel(name)!, 800, 800, { classes, frozenNorms: false, pretrained: false, detections: false }).parameters, count, name);
  }
});

test('GeneralizedRCNNTransform: the shorter side to min_size unless the longer passes max_size, the batch padded to a multiple of 32', () => {
  const rcnn = findDetectionModel('fasterrcnn_resnet50_fpn')!;
  assert.deepEqual(detectionInputSize(rcnn, 600, 900), { height: 800, width: 1200, paddedHeight: 800, paddedWidth: 1216 });
  assert.deepEqual(detectionInputSize(rcnn, 480, 640), { height: 800, width: 1066, paddedHeight: 800, paddedWidth: 1088 });
  // A panorama: the longer side caps the scale.
  assert.deepEqual(detectionInputSize(rcnn, 400, 1600), { height: 333, width: 1333, paddedHeight: 352, paddedWidth: 1344 });
  assert.deepEqual(detectionInputSize(findDetectionModel('fasterrcnn_mobilenet_v3_large_320_fpn')!, 480, 640), { height: 320, width: 426, paddedHeight: 320, paddedWidth: 448 });
});

test('RetinaNet inference on 600x900 images: resolved at the resized size, within 10% of the H200 peak', async () => {
  const result = await estimateText(script('retinanet_resnet50_fpn', 'weights=None, weights_backbone=None, num_classes=91', evalLoop(600, 900, 16)), '/tmp/retina.py');
  assert.equal(result.unresolved, undefined);
  assert.equal(result.detected.parameters, 34_068_119);
  assert.equal(result.config.imageSize, 600);
  assert.ok(result.assumptions.some((a) => /600x900 images to 800x1200 and pads the batch to 800x1216/.test(a)), result.assumptions.join('\n'));
  const measured = 3_667_610_624;
  assert.ok(Math.abs(result.peakAllocated / measured - 1) < 0.1, `${result.peakAllocated / MIB} MiB`);
});

test('Faster R-CNN MobileNetV3 training with a loss dict: images from the Dataset, within 10% of the H200 peak', async () => {
  const text = [
    'import torch',
    'from torch.utils.data import DataLoader, Dataset',
    'from torchvision.models.detection import fasterrcnn_mobilenet_v3_large_fpn',
    'class Boxes(Dataset):',
    '    def __len__(self):',
    '        return 64',
    '    def __getitem__(self, i):',
    '        img = torch.rand(3, 480, 640)',
    '        boxes = torch.tensor([[10.0, 20.0, 200.0, 240.0]])',
    '        return img, {"boxes": boxes, "labels": torch.tensor([1])}',
    'model = fasterrcnn_mobilenet_v3_large_fpn(weights=None, weights_backbone=None, num_classes=21).cuda()',
    'opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)',
    'loader = DataLoader(Boxes(), batch_size=16, collate_fn=lambda b: tuple(zip(*b)))',
    'model.train()',
    'for images, targets in loader:',
    '    images = [im.cuda() for im in images]',
    '    targets = [{k: v.cuda() for k, v in t.items()} for t in targets]',
    '    losses = model(images, targets)',
    '    loss = sum(losses.values())',
    '    opt.zero_grad()',
    '    loss.backward()',
    '    opt.step()',
  ].join('\n');
  const result = await estimateText(text, '/tmp/frcnn.py');
  assert.equal(result.unresolved, undefined);
  assert.equal(result.detected.parameters, 19_052_004);
  assert.equal(result.config.batchSize, 16);
  assert.equal(result.config.mode, 'train');
  assert.ok(result.assumptions.some((a) => /512 proposals/.test(a)));
  const measured = 13_677_708_800;
  assert.ok(Math.abs(result.peakAllocated / measured - 1) < 0.1, `${result.peakAllocated / MIB} MiB`);
  // Larger images cost more: the estimate follows the transform's size, not a fixed one.
  const bigger = await estimateText(text.replace('480, 640', '960, 1280').replace('weights=None', 'min_size=960, weights=None'), '/tmp/frcnn2.py');
  assert.ok(bigger.peakAllocated >= result.peakAllocated);
});

test('a detector whose images the script does not size stays unresolved and says its parameter count', async () => {
  const text = script('maskrcnn_resnet50_fpn', 'weights=None, weights_backbone=None', ['model.eval()', 'with torch.no_grad():', '    out = model(images)']);
  const result = await estimateText(text, '/tmp/mask.py');
  assert.equal(result.detected.model.source, 'unresolved');
  assert.match(result.unresolved?.reason ?? '', /44,454,513 parameters/);
});

test('Mask R-CNN evaluation: random weights make no detections for the mask head, pretrained ones up to 100 an image', async () => {
  const random = await estimateText(script('maskrcnn_resnet50_fpn', 'weights=None, weights_backbone=None', evalLoop(480, 480, 8)), '/tmp/mask_random.py');
  const trained = await estimateText(script('maskrcnn_resnet50_fpn', 'weights="DEFAULT"', evalLoop(480, 480, 8)), '/tmp/mask_trained.py');
  assert.ok(random.assumptions.some((a) => /no detection reaches the mask/.test(a)));
  assert.ok(trained.assumptions.some((a) => /100 detections an image/.test(a)));
  assert.ok(trained.breakdown.activations >= random.breakdown.activations);
  // At a small input the hundred detections' mask head (and their masks pasted at the image's size) is the peak.
  const mask = findDetectionModel('maskrcnn_resnet50_fpn')!;
  const live = (detections: boolean): number => detectorNet(mask, 320, 320, { classes: 91, frozenNorms: false, pretrained: detections, detections }).inferenceLiveElementsPerSample;
  assert.ok(live(true) > 1.5 * live(false), `${live(true)} vs ${live(false)}`);
  assert.equal(trained.detected.parameters, 44_401_393);
});

test('every detector row measured on the H200 (probe_detection.py): within 5% in training and in no-grad evaluation', async () => {
  const runs = (JSON.parse(fs.readFileSync(path.join(repoRoot, 'test', 'gpu', 'estimator', 'results', 'detection.json'), 'utf8')) as {
    runs: Array<{ model: string; mode: string; batch: number; h: number; w: number; num_classes: number; peak?: number; step_start?: number; params?: number; error?: string }>;
  }).runs;
  let checked = 0;
  for (const r of runs) {
    // Errors (see the probe's header), segmentation rows, and Mask R-CNN's evaluation rows, which started on memory
    // left by earlier runs (their peak over their start equals Faster R-CNN's, as the estimate's does).
    if (r.error || r.peak === undefined || !findDetectionModel(r.model) || (r.mode === 'eval' && r.model.startsWith('maskrcnn'))) continue;
    const body = r.mode === 'train'
      ? ['opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)', 'model.train()', 'for step in range(3):',
        `    images = [torch.rand(3, ${r.h}, ${r.w}, device="cuda") for _ in range(BATCH)]`, '    losses = model(images, targets)',
        '    loss = sum(losses.values())', '    opt.zero_grad()', '    loss.backward()', '    opt.step()']
      : evalLoop(r.h, r.w, r.batch).slice(1);
    const text = script(r.model, `weights=None, weights_backbone=None, num_classes=${r.num_classes}`, [`BATCH = ${r.batch}`, ...body]);
    const result = await estimateText(text, '/tmp/probe.py');
    const label = `${r.model} ${r.mode} b${r.batch} ${r.h}x${r.w}`;
    assert.equal(result.detected.parameters, r.params, label);
    const error = result.peakAllocated / (r.peak * MIB) - 1;
    assert.ok(Math.abs(error) < 0.05, `${label}: ${(error * 100).toFixed(1)}%`);
    checked++;
  }
  assert.ok(checked >= 15, `${checked} rows`);
});

test('a segmentation model fed images that are not square is sized for a square of the same area, and says so', async () => {
  const text = (h: number, w: number): string => [
    'import torch',
    'from torchvision.models.segmentation import deeplabv3_resnet50',
    'model = deeplabv3_resnet50(weights=None, weights_backbone=None, num_classes=19).cuda()',
    'opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)',
    'for step in range(10):',
    `    x = torch.randn(4, 3, ${h}, ${w}, device="cuda")`,
    `    y = torch.randint(0, 19, (4, ${h}, ${w}), device="cuda")`,
    '    loss = torch.nn.functional.cross_entropy(model(x)["out"], y)',
    '    opt.zero_grad()',
    '    loss.backward()',
    '    opt.step()',
  ].join('\n');
  const wide = await estimateText(text(512, 1024), '/tmp/seg_wide.py');
  assert.equal(wide.config.imageSize, 724);
  assert.ok(wide.assumptions.some((a) => /512x1024: counted as 724x724/.test(a)), wide.assumptions.join('\n'));
  const square = await estimateText(text(724, 724), '/tmp/seg_square.py');
  assert.equal(wide.peakAllocated, square.peakAllocated);
});
