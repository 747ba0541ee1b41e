// Fine-tuning with a frozen part (transfer learning): a torchvision classifier with a new head, frozen in the
// shapes scripts use, and a detector over pretrained weights (FrozenBatchNorm2d, trainable_backbone_layers). Each
// configuration was measured on the H200 by test/gpu/estimator/probe_frozen.py (results/frozen.json).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { estimateText, MIB, repoRoot } from './helpers';
import { detectorNet, findDetectionModel } from '../../server/src/estimator/catalog/detection';

interface ProbeRow {
  kind: 'classifier' | 'detector';
  model: string;
  mode: 'train' | 'eval';
  batch: number;
  amp?: boolean;
  freeze?: string[];
  freeze_all?: boolean;
  opt_head_only?: boolean;
  head?: string;
  h?: number;
  w?: number;
  num_classes?: number;
  predictor_classes?: number;
  params: number;
  trainable: number;
  step_peaks: number[];
  error?: string;
}

const runs = (JSON.parse(fs.readFileSync(path.join(repoRoot, 'test', 'gpu', 'estimator', 'results', 'frozen.json'), 'utf8')) as { runs: ProbeRow[] }).runs;
const measuredPeak = (row: ProbeRow): number => Math.max(...row.step_peaks) * MIB;

/** `model.fc`, `model.classifier[1]`, `model.heads.head`: the probe's head path as Python. */
const attributePath = (head: string): string => head.split('.').map((part) => (/^\d+$/.test(part) ? `[${part}]` : `.${part}`)).join('');

/** The probe's classifier row as a user would write it (weights named as a fine-tuning script names them). */
function classifierScript(row: ProbeRow): string {
  const head = `model${attributePath(row.head!)}`;
  const lines = ['import torch', 'import torch.nn as nn', 'import torch.nn.functional as F', 'import torchvision',
    `model = torchvision.models.${row.model}(weights="DEFAULT")`];
  if (row.freeze_all) lines.push('for p in model.parameters():', '    p.requires_grad = False');
  lines.push(`${head} = nn.Linear(${head}.in_features, 10)`);
  if (row.freeze && row.freeze.length > 0) lines.push(`for name in ${JSON.stringify(row.freeze)}:`, '    getattr(model, name).requires_grad_(False)');
  lines.push('model = model.cuda()');
  lines.push(row.opt_head_only ? `opt = torch.optim.AdamW(${head}.parameters(), lr=1e-3)` : 'opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)');
  lines.push(`BATCH = ${row.batch}`, 'for step in range(10):', '    x = torch.randn(BATCH, 3, 224, 224, device="cuda")', '    y = torch.randint(0, 10, (BATCH,), device="cuda")');
  if (row.amp) lines.push('    with torch.autocast("cuda", dtype=torch.bfloat16):', '        loss = F.cross_entropy(model(x), y)');
  else lines.push('    loss = F.cross_entropy(model(x), y)');
  lines.push('    opt.zero_grad()', '    loss.backward()', '    opt.step()');
  return lines.join('\n');
}

test('classifiers fine-tuned with a frozen part or a new head: every probe row within 10% of the H200, trainable parameters exact', async () => {
  let checked = 0;
  for (const row of runs.filter((r) => r.kind === 'classifier' && !r.error)) {
    const label = `${row.model} freeze=${row.freeze_all ? 'all' : (row.freeze ?? []).join(',')}${row.opt_head_only ? ' optimizer on the head' : ''}${row.amp ? ' bf16' : ''}`;
    const result = await estimateText(classifierScript(row), '/tmp/finetune.py');
    assert.equal(result.unresolved, undefined, label);
    assert.equal(result.detected.parameters, row.params, label);
    // The optimizer holding only the head's parameters freezes nothing: every gradient is still computed.
    assert.equal(result.detected.trainableParameters, row.opt_head_only ? row.params : row.trainable, label);
    // ... and only the head's states are kept (2048 x 10 + 10).
    if (row.opt_head_only) assert.ok(result.assumptions.some((a) => a.includes('holds 20,490 of the 23,528,522 parameters')), result.assumptions.join('\n'));
    const error = result.peakAllocated / measuredPeak(row) - 1;
    assert.ok(Math.abs(error) < 0.1, `${label}: ${(error * 100).toFixed(1)}%`);
    checked++;
  }
  assert.equal(checked, 11);
});

test('a frozen backbone keeps nothing for backward: the step peaks in the frozen forward, far under full fine-tuning', async () => {
  const full = runs.find((r) => r.kind === 'classifier' && r.model === 'resnet50' && !r.freeze_all && !r.opt_head_only && (r.freeze ?? []).length === 0 && !r.amp)!;
  const frozen = runs.find((r) => r.kind === 'classifier' && r.model === 'resnet50' && r.freeze_all && !r.amp)!;
  const fullResult = await estimateText(classifierScript(full), '/tmp/full.py');
  const frozenResult = await estimateText(classifierScript(frozen), '/tmp/frozen.py');
  assert.ok(frozenResult.breakdown.activations < 0.01 * fullResult.breakdown.activations);
  assert.ok(frozenResult.peakAllocated < 0.2 * fullResult.peakAllocated);
  // No assumed share: the program model ran the freezing loop and the new head.
  assert.ok(!frozenResult.assumptions.some((a) => /assumed \d+% of them frozen/.test(a)), frozenResult.assumptions.join('\n'));
});

test('the freezing shapes agree: a loop over parameters(), requires_grad_(False) on the model or on named submodules', async () => {
  const body = (freeze: string[]): string => ['import torch', 'import torch.nn as nn', 'import torchvision',
    'model = torchvision.models.resnet50(weights="IMAGENET1K_V2")', ...freeze, 'model.cuda()',
    'opt = torch.optim.SGD(filter(lambda p: p.requires_grad, model.parameters()), lr=0.01, momentum=0.9)',
    'for step in range(10):', '    x = torch.randn(32, 3, 224, 224, device="cuda")', '    y = torch.randint(0, 5, (32,), device="cuda")',
    '    loss = nn.functional.cross_entropy(model(x), y)', '    opt.zero_grad()', '    loss.backward()', '    opt.step()'].join('\n');
  const loop = await estimateText(body(['for param in model.parameters():', '    param.requires_grad = False', 'model.fc = nn.Linear(2048, 5)']), '/tmp/a.py');
  const whole = await estimateText(body(['model.requires_grad_(False)', 'model.fc = nn.Linear(2048, 5)']), '/tmp/b.py');
  assert.equal(loop.peakAllocated, whole.peakAllocated);
  assert.equal(loop.detected.trainableParameters, 2048 * 5 + 5);
  // Frozen after the new head is in place: the head is frozen too, nothing trains.
  const headFrozen = await estimateText(body(['model.fc = nn.Linear(2048, 5)', 'model.requires_grad_(False)']), '/tmp/c.py');
  assert.equal(headFrozen.detected.trainableParameters, 0);
  // Named submodules one by one, or through their parameters: the same prefix.
  const named = await estimateText(body(['model.conv1.requires_grad_(False)', 'model.bn1.requires_grad_(False)', 'model.layer1.requires_grad_(False)']), '/tmp/d.py');
  const viaParameters = await estimateText(body(['for module in [model.conv1, model.bn1, model.layer1]:', '    for p in module.parameters():', '        p.requires_grad = False']), '/tmp/e.py');
  assert.equal(named.peakAllocated, viaParameters.peakAllocated);
  assert.equal(named.detected.trainableParameters, viaParameters.detected.trainableParameters);
  assert.ok(named.detected.trainableParameters < named.detected.parameters);
  // A layer frozen after a trained one still records (its input has history): only a prefix keeps nothing.
  const middle = await estimateText(body(['model.layer2.requires_grad_(False)']), '/tmp/f.py');
  const none = await estimateText(body([]), '/tmp/g.py');
  assert.equal(middle.breakdown.activations, none.breakdown.activations);
  assert.ok(middle.detected.trainableParameters < none.detected.trainableParameters);
});

/** The probe's detector rows with the structure pretrained weights give, written as scripts do it. */
function detectorScript(row: ProbeRow): string | undefined {
  const match = /^(fasterrcnn|maskrcnn|retinanet)\/pretrained-structure\/tl(\d)$/.exec(row.model);
  if (!match) return undefined;
  const [, arch, trainable] = match;
  // weights=None with the default ImageNet backbone: FrozenBatchNorm2d, the builder's trainable_backbone_layers,
  // and heads as random as the probe's.
  const builder = `${arch}_resnet50_fpn`;
  const lines = ['import torch', 'import torchvision', 'from torchvision.models.detection.faster_rcnn import FastRCNNPredictor',
    `model = torchvision.models.detection.${builder}(weights=None${trainable === '3' ? '' : `, trainable_backbone_layers=${trainable}`})`];
  if (row.predictor_classes) lines.push('in_features = model.roi_heads.box_predictor.cls_score.in_features', `model.roi_heads.box_predictor = FastRCNNPredictor(in_features, ${row.predictor_classes})`);
  lines.push('model.to("cuda")', `BATCH = ${row.batch}`);
  if (row.mode === 'train') {
    lines.push('opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.01, momentum=0.9, weight_decay=1e-4)', 'model.train()',
      'for step in range(3):', `    images = [torch.rand(3, ${row.h}, ${row.w}, device="cuda") for _ in range(BATCH)]`,
      '    targets = [{"boxes": torch.tensor([[10.0, 20.0, 200.0, 240.0]], device="cuda"), "labels": torch.tensor([1], device="cuda")} for _ in range(BATCH)]',
      '    opt.zero_grad()', '    loss = sum(model(images, targets).values())', '    loss.backward()', '    opt.step()');
  } else {
    lines.push('model.eval()', 'with torch.no_grad():', '    for _ in range(3):', `        out = model([torch.rand(3, ${row.h}, ${row.w}, device="cuda") for _ in range(BATCH)])`);
  }
  return lines.join('\n');
}

test('detectors over pretrained weights (FrozenBatchNorm2d, lower stages frozen): every probe row within 5% of the H200', async () => {
  let checked = 0;
  for (const row of runs.filter((r) => r.kind === 'detector' && !r.error)) {
    const text = detectorScript(row);
    if (!text) continue;
    const label = `${row.model} ${row.mode} b${row.batch} ${row.h}x${row.w}${row.predictor_classes ? ` predictor ${row.predictor_classes}` : ''}`;
    const result = await estimateText(text, '/tmp/detector.py');
    assert.equal(result.unresolved, undefined, label);
    assert.equal(result.detected.parameters, row.params, label);
    if (row.mode === 'train') assert.equal(result.detected.trainableParameters, row.trainable, label);
    const error = result.peakAllocated / measuredPeak(row) - 1;
    assert.ok(Math.abs(error) < 0.05, `${label}: ${(error * 100).toFixed(1)}%`);
    if (row.mode === 'train') assert.ok(result.assumptions.some((a) => /FrozenBatchNorm2d layers keep nothing/.test(a)), result.assumptions.join('\n'));
    checked++;
  }
  assert.equal(checked, 7);
});

test('a detector batch built by a list comprehension: its length is the batch, wherever the count is named', async () => {
  const inline = ['import torch', 'from torchvision.models.detection import fasterrcnn_resnet50_fpn', 'dev = torch.device("cuda")',
    'model = fasterrcnn_resnet50_fpn(weights=None, weights_backbone=None).to(dev)', 'model.eval()', 'n_images = 8', 'with torch.no_grad():',
    '    for _ in range(5):', '        images = [torch.rand(3, 600, 900, device=dev) for _ in range(n_images)]', '        preds = model(images)'].join('\n');
  const result = await estimateText(inline, '/tmp/list.py');
  assert.equal(result.config.batchSize, 8);
  assert.equal(result.detected.batchSize.line, 6);
  // The probe's row (detection.json: Faster R-CNN, eval, 8 images of 600x900): 4,267 MiB.
  assert.ok(Math.abs(result.peakAllocated / (4267 * MIB) - 1) < 0.05, `${result.peakAllocated / MIB} MiB`);
  const helper = ['import torch', 'import torchvision', 'model = torchvision.models.detection.retinanet_resnet50_fpn(weights=None, weights_backbone=None).cuda().eval()',
    'def make_batch(k):', '    return [torch.rand(3, 480, 640, device="cuda") for _ in range(k)]', 'with torch.no_grad():', '    for step in range(10):',
    '        out = model(make_batch(12))'].join('\n');
  assert.equal((await estimateText(helper, '/tmp/list2.py')).config.batchSize, 12);
});

test('FCOS, RetinaNet v2 and keypoint R-CNN (derived from their code, then measured): within 5% of the H200, parameters exact', async () => {
  const probe = JSON.parse(fs.readFileSync(path.join(repoRoot, 'test', 'gpu', 'estimator', 'results', 'frozen.json'), 'utf8')) as { params: Record<string, [number, number] | string> };
  for (const name of ['fcos_resnet50_fpn', 'retinanet_resnet50_fpn_v2', 'keypointrcnn_resnet50_fpn']) {
    for (const classes of [91, 21, 2]) {
      const counted = probe.params[`${name}/${classes}`];
      const net = detectorNet(findDetectionModel(name)!, 800, 800, { classes, frozenNorms: false, pretrained: false, detections: false });
      assert.ok(Array.isArray(counted));
      assert.equal(net.parameters, counted[0], `${name}/${classes}`);
    }
  }
  let checked = 0;
  // SSD's rows are ssd.test.ts's.
  for (const row of runs.filter((r) => r.kind === 'detector' && !r.error && findDetectionModel(r.model) && !r.model.startsWith('ssd'))) {
    const body = row.mode === 'train'
      ? ['opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.01, momentum=0.9)', 'model.train()', 'for step in range(3):',
        `    images = [torch.rand(3, ${row.h}, ${row.w}, device="cuda") for _ in range(BATCH)]`,
        '    targets = [{"boxes": torch.tensor([[10.0, 20.0, 200.0, 240.0]], device="cuda"), "labels": torch.tensor([1], device="cuda")} for _ in range(BATCH)]',
        '    loss = sum(model(images, targets).values())', '    opt.zero_grad()', '    loss.backward()', '    opt.step()']
      : ['model.eval()', 'with torch.no_grad():', '    for _ in range(3):', `        out = model([torch.rand(3, ${row.h}, ${row.w}, device="cuda") for _ in range(BATCH)])`];
    const text = ['import torch', 'from torchvision.models import detection',
      `model = detection.${row.model}(weights=None, weights_backbone=None, num_classes=${row.num_classes}).cuda()`, `BATCH = ${row.batch}`, ...body].join('\n');
    const result = await estimateText(text, '/tmp/dense.py');
    const label = `${row.model} ${row.mode} b${row.batch}`;
    assert.equal(result.detected.parameters, row.params, label);
    const error = result.peakAllocated / measuredPeak(row) - 1;
    assert.ok(Math.abs(error) < 0.05, `${label}: ${(error * 100).toFixed(1)}%`);
    checked++;
  }
  assert.equal(checked, 6);
});

test('freezing by name (named_parameters() filtered by a prefix): the parts the names fall in, frozen exactly', async () => {
  const text = ['import torch', 'import torch.nn as nn', 'import torchvision', 'model = torchvision.models.resnet50(weights="IMAGENET1K_V2")',
    'model.fc = nn.Linear(2048, 10)', 'for name, param in model.named_parameters():', '    if not name.startswith("fc"):', '        param.requires_grad = False',
    'model = model.cuda()', 'opt = torch.optim.AdamW(filter(lambda p: p.requires_grad, model.parameters()), lr=1e-3)', 'for step in range(10):',
    '    x = torch.randn(64, 3, 224, 224, device="cuda")', '    y = torch.randint(0, 10, (64,), device="cuda")', '    opt.zero_grad()',
    '    loss = nn.functional.cross_entropy(model(x), y)', '    loss.backward()', '    opt.step()'].join('\n');
  const result = await estimateText(text, '/tmp/named.py');
  assert.equal(result.detected.parameters, 23_528_522);
  // Every part but the new head (2048 x 10 + 10) frozen.
  assert.equal(result.detected.trainableParameters, 20_490);
  assert.ok(!result.assumptions.some((a) => /assumed \d+% of them frozen/.test(a)), result.assumptions.join('\n'));
});

test('a net that names no part but its head (timm Swin): frozen whole, then its head unfrozen, trains the head alone', async () => {
  const script = (freeze: string[]): string => ['import torch', 'import torch.nn as nn', 'import timm',
    'model = timm.create_model("swin_tiny_patch4_window7_224", pretrained=True, num_classes=10)', ...freeze, 'model.cuda()',
    'opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)', 'for step in range(10):',
    '    x = torch.randn(64, 3, 224, 224, device="cuda")', '    y = torch.randint(0, 10, (64,), device="cuda")', '    opt.zero_grad()',
    '    loss = nn.functional.cross_entropy(model(x), y)', '    loss.backward()', '    opt.step()'].join('\n');
  const head = await estimateText(script(['for p in model.parameters():', '    p.requires_grad = False', 'for p in model.head.parameters():', '    p.requires_grad = True']), '/tmp/swin.py');
  const full = await estimateText(script([]), '/tmp/swin_full.py');
  assert.equal(head.detected.trainableParameters, 768 * 10 + 10);
  assert.ok(head.breakdown.activations < 0.01 * full.breakdown.activations);
  assert.ok(head.peakAllocated < 0.25 * full.peakAllocated);
});

test('a torchvision ViT frozen whole with a new head, a Linear or a Sequential ending in one: the head\'s classes, and only it trains', async () => {
  const script = (head: string): string => ['import torch', 'import torch.nn as nn', 'import torchvision',
    'model = torchvision.models.vit_b_16(weights="DEFAULT")', 'for p in model.parameters():', '    p.requires_grad = False', head, 'model = model.cuda()',
    'opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)', 'for step in range(10):',
    '    x = torch.randn(32, 3, 224, 224, device="cuda")', '    y = torch.randint(0, 10, (32,), device="cuda")', '    opt.zero_grad()',
    '    loss = nn.functional.cross_entropy(model(x), y)', '    loss.backward()', '    opt.step()'].join('\n');
  const linear = await estimateText(script('model.heads.head = nn.Linear(768, 10)'), '/tmp/vit_linear.py');
  const sequential = await estimateText(script('model.heads = nn.Sequential(nn.Dropout(0.1), nn.Linear(768, 10))'), '/tmp/vit_sequential.py');
  for (const result of [linear, sequential]) {
    // ViT-B/16's 85,798,656 parameters before its head, and a head of 768 x 10 + 10.
    assert.equal(result.detected.parameters, 85_798_656 + 768 * 10 + 10);
    assert.equal(result.detected.trainableParameters, 768 * 10 + 10);
  }
});
