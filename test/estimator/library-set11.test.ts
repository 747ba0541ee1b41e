// Library models of set 11: a torchvision detector named through get_model, whose GroupNorm head autocast keeps in
// fp32, and timm / torchvision families the catalog did not know.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';
import { detectorNet, findDetectionModel } from '../../server/src/estimator/catalog/detection';
import { findVisionModel } from '../../server/src/estimator/catalog/vision';
import type { LayerNetSpec } from '../../server/src/estimator/types';

const detectorTraining = (builder: string, autocast: boolean): string => [
  'import torch',
  'import torchvision',
  `model = ${builder}`,
  'model.cuda().train()',
  'optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)',
  'for _ in range(3):',
  '    images = [torch.rand(3, 512, 512, device="cuda") for _ in range(4)]',
  '    targets = [{"boxes": torch.tensor([[10.0, 20.0, 200.0, 220.0]], device="cuda"), "labels": torch.tensor([1], device="cuda")} for _ in range(4)]',
  `    with torch.autocast("cuda", enabled=${autocast ? 'True' : 'False'}):`,
  '        losses = sum(model(images, targets).values())',
  '    optimizer.zero_grad()',
  '    losses.backward()',
  '    optimizer.step()',
].join('\n');

test('torchvision.models.get_model names a detector: built as its own builder is', async () => {
  const byName = await estimateText(detectorTraining('torchvision.models.get_model("retinanet_resnet50_fpn_v2", weights=None, weights_backbone=None, num_classes=21)', false), '/tmp/get_model_retinanet.py');
  const direct = await estimateText(detectorTraining('torchvision.models.detection.retinanet_resnet50_fpn_v2(weights=None, weights_backbone=None, num_classes=21)', false), '/tmp/retinanet_v2.py');
  assert.equal(byName.detected.model.name, 'retinanet_resnet50_fpn_v2');
  assert.equal(byName.detected.parameters, 36_746_785); // probe_detection.py's count for 21 classes
  assert.equal(byName.peakAllocated, direct.peakAllocated);
});

test('RetinaNet v2 under autocast: its GroupNorm head keeps fp32 copies, so it keeps more than half of fp32\'s head', async () => {
  const v2 = findDetectionModel('retinanet_resnet50_fpn_v2')!;
  const v1 = findDetectionModel('retinanet_resnet50_fpn')!;
  const options = { classes: 21, frozenNorms: false, pretrained: false, detections: false };
  const groupNormed = detectorNet(v2, 512, 512, options);
  assert.ok(groupNormed.autocastSavedBytesPerSample! > 2 * groupNormed.savedElementsPerSample);
  // v1's head has no norm: autocast halves what it keeps.
  assert.equal(detectorNet(v1, 512, 512, options).autocastSavedBytesPerSample, undefined);
  const amp = await estimateText(detectorTraining('torchvision.models.get_model("retinanet_resnet50_fpn_v2", weights=None, weights_backbone=None, num_classes=21)', true), '/tmp/retinanet_v2_amp.py');
  const fp32 = await estimateText(detectorTraining('torchvision.models.get_model("retinanet_resnet50_fpn_v2", weights=None, weights_backbone=None, num_classes=21)', false), '/tmp/retinanet_v2_fp32.py');
  assert.ok(amp.breakdown.activations > 0.5 * fp32.breakdown.activations);
});

test('timm resnest50d: a ResNet-D with split-attention bottlenecks, its parameters as timm builds them', async () => {
  const vision = findVisionModel('resnest50d')!;
  const built = (classes: number): number => (vision.build(224, classes) as LayerNetSpec).parameters;
  // 27,483,240 with ImageNet's head (timm's 27.48M); its head is a 2048-wide linear.
  assert.equal(built(1000), 27_483_240);
  assert.equal(built(10), 27_483_240 - 990 * 2049);
  // Split attention keeps its doubled map: more than a ResNet-50 at the same size, less than twice.
  const resnet = findVisionModel('resnet50')!.build(224, 1000) as LayerNetSpec;
  const resnest = vision.build(224, 1000) as LayerNetSpec;
  assert.ok(resnest.savedElementsPerSample > resnet.savedElementsPerSample && resnest.savedElementsPerSample < 2 * resnet.savedElementsPerSample);
  const script = ['import timm, torch', 'model = timm.create_model("resnest50d", num_classes=10).cuda()',
    'optimizer = torch.optim.SGD(model.parameters(), lr=0.1)', 'for _ in range(3):',
    '    loss = model(torch.randn(16, 3, 224, 224, device="cuda")).logsumexp(1).mean()', '    optimizer.zero_grad()', '    loss.backward()', '    optimizer.step()'].join('\n');
  const result = await estimateText(script, '/tmp/resnest.py');
  assert.equal(result.detected.model.name, 'resnest50d');
  assert.equal(result.detected.parameters, built(10));
});

test('timm eca_nfnet_l0: weight-standardized convolutions (a bias and a gain each), ECA, no norms', () => {
  const vision = findVisionModel('eca_nfnet_l0')!;
  const built = (classes: number): number => (vision.build(256, classes) as LayerNetSpec).parameters;
  // timm's 24.14M with ImageNet's head, a 2304-wide linear (1.5 x 1536).
  assert.equal(built(1000), 24_143_924);
  assert.equal(built(100), 24_143_924 - 900 * 2305);
  // Stride 32 in all: the maps, and what they keep, follow the image's area.
  const at = (size: number): number => (vision.build(size, 1000) as LayerNetSpec).savedElementsPerSample;
  assert.ok(Math.abs(at(448) / at(224) - 4) < 0.05);
});

test('timm twins_svt_small: alternating windowed and sub-sampled attention, its parameters as timm builds them', () => {
  const vision = findVisionModel('twins_svt_small')!;
  const built = (classes: number): number => (vision.build(224, classes) as LayerNetSpec).parameters;
  // timm's 24.06M with ImageNet's head (a 512-wide linear).
  assert.equal(built(1000), 24_060_776);
  assert.equal(built(10), 24_060_776 - 990 * 513);
});
