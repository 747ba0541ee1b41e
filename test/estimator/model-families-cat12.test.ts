// torchvision families the catalog lacked (issue #13, set 11's two unresolved scripts): MViT (video), RAFT (optical
// flow, image pairs refined `num_flow_updates` times), AlexNet, SqueezeNet, ShuffleNetV2 and MNASNet. Each is checked
// by its exact parameter count, by what the script around it decides (iterations, image pairs' size, classes), and
// MViT and RAFT by what forward keeps, against saved-tensor counts taken on the CPU
// (test/gpu/estimator/saved_cpu_cat12.py, results/cat12_cpu_saved.json).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { estimateFixture, estimateText, repoRoot } from './helpers';
import { findVideoModel, findVisionModel } from '../../server/src/estimator/catalog/vision';
import { findFlowModel } from '../../server/src/estimator/catalog/optical-flow';

const fixture = (name: string) => path.join('catalog-cat12', name);
const fixtureText = (name: string) => fs.readFileSync(path.join(repoRoot, 'test', 'fixtures', 'estimator', 'catalog-cat12', name), 'utf8');

interface CpuRow { model: string; h?: number; w?: number; updates?: number; saved_per_sample?: number; params?: number;
  first_blocks_saved_per_sample?: number[]; first_blocks_params?: number[]; batch: number }
const cpuRows = (): CpuRow[] =>
  (JSON.parse(fs.readFileSync(path.join(repoRoot, 'test', 'gpu', 'estimator', 'results', 'cat12_cpu_saved.json'), 'utf8')) as { rows: CpuRow[] }).rows;

test('MViT V1-B and V2-S have torchvision\'s exact parameter counts, and follow num_classes', () => {
  assert.equal(findVideoModel('mvit_v1_b')!.build(16)(224, 400).parameters, 36_610_672);
  assert.equal(findVideoModel('mvit_v2_s')!.build(16)(224, 400).parameters, 34_537_744);
  assert.equal(findVideoModel('mvit_v2_s')!.build(16)(224, 60).parameters, 34_537_744 - 768 * 340 - 340);
  // Swin3D-S and -B (measured on the H200, results/probe_cat12.jsonl).
  assert.equal(findVideoModel('swin3d_s')!.build(16)(224, 400).parameters, 49_816_678);
  assert.equal(findVideoModel('swin3d_b')!.build(16)(224, 400).parameters, 88_048_984);
});

test('MViT\'s first five blocks keep what autograd saves for them (CPU saved-tensor count, weights apart), within 6%', () => {
  for (const row of cpuRows().filter((r) => r.first_blocks_saved_per_sample)) {
    const spec = findVideoModel(row.model)!.build(16)(224, 400);
    // The CPU count holds the blocks' weights (their layers save them), once per batch: the estimator counts them as parameters.
    const measured = row.first_blocks_saved_per_sample!.reduce((a, b) => a + b, 0) - row.first_blocks_params!.reduce((a, b) => a + b, 0) / row.batch;
    const built = spec.blockSavedElements.slice(0, 5).reduce((a, b) => a + b, 0);
    assert.ok(Math.abs(built / measured - 1) <= 0.06, `${row.model}: ${built} vs ${measured}`);
  }
});

test('an MViT clip classifier is resolved from torchvision.models.video, its classes and its clips read from the script', async () => {
  const result = await estimateFixture(fixture('mvit_clips_train.py'));
  assert.equal(result.unresolved, undefined);
  assert.equal(result.detected.parameters, 34_537_744 - 768 * 340 - 340);
  assert.equal(result.detected.imageSize?.value, 224);
  // Pooled attention's probabilities dominate: four clips keep gigabytes, a batch twice as large about twice as much.
  const twice = await estimateText(fixtureText('mvit_clips_train.py').replace('BATCH = 4', 'BATCH = 8'), '/tmp/mvit_b8.py');
  const ratio = twice.breakdown.activations / result.breakdown.activations;
  assert.ok(result.breakdown.activations > 4 * 2 ** 30 && ratio > 1.9 && ratio < 2.1, `${result.breakdown.activations} ${ratio}`);
});

test('RAFT small and large have torchvision\'s exact parameter counts at any size and iteration count', () => {
  for (const [name, count] of [['raft_small', 990_162], ['raft_large', 5_257_536]] as const) {
    assert.equal(findFlowModel(name)!.build(368, 496, 12).parameters, count);
    assert.equal(findFlowModel(name)!.build(128, 160, 2).parameters, count);
  }
});

test('RAFT keeps what autograd saves (CPU saved-tensor count, weights and the first image apart), within 5%, over sizes and iterations', () => {
  const rows = cpuRows().filter((r) => r.saved_per_sample !== undefined);
  assert.ok(rows.length >= 6);
  for (const row of rows) {
    const spec = findFlowModel(row.model)!.build(row.h!, row.w!, row.updates!);
    // The CPU count holds the weights once per batch and the first image (kept by the context encoder), both the
    // estimator's elsewhere; the builder's saved elements hold the returned flows, which autograd does not save.
    const measured = row.saved_per_sample! - row.params! / row.batch - 3 * row.h! * row.w!;
    const built = spec.savedElementsPerSample - spec.outputElementsPerSample;
    assert.ok(Math.abs(built / measured - 1) <= 0.05, `${row.model} ${row.h}x${row.w} x${row.updates}: ${built} vs ${measured}`);
  }
});

/** The flows a RAFT returns per image pair (one full-size prediction per iteration): how the estimate reads its iterations. */
function returnedFlows(result: Awaited<ReturnType<typeof estimateText>>, height: number, width: number): number {
  const spec = result.config.model;
  assert.equal(spec.kind, 'layers');
  return spec.kind === 'layers' ? spec.outputElementsPerSample / (2 * height * width) : 0;
}

test('RAFT reads num_flow_updates from the step\'s call and the image pairs\' size from the dataset', async () => {
  const six = await estimateFixture(fixture('raft_pairs_config.py'));
  assert.equal(six.unresolved, undefined);
  assert.equal(six.detected.parameters, 5_257_536);
  assert.equal(returnedFlows(six, 320, 448), 6);
  assert.ok(six.assumptions.some((a) => a.includes('320x448')), six.assumptions.join('\n'));
  assert.ok(!six.assumptions.some((a) => a.includes('num_flow_updates')));
  const twelve = await estimateText(fixtureText('raft_pairs_config.py').replace('default=6', 'default=12'), '/tmp/raft_12.py');
  assert.equal(returnedFlows(twelve, 320, 448), 12);
  // Every iteration keeps its lookup, motion features and GRU state: batch 2 in fp32.
  const saved = (updates: number) => findFlowModel('raft_large')!.build(320, 448, updates).savedElementsPerSample;
  const grown = twelve.breakdown.activations - six.breakdown.activations;
  const expected = 2 * 4 * (saved(12) - saved(6));
  assert.ok(grown > 0.9 * expected, `${grown} vs ${expected}`);
});

test('RAFT without num_flow_updates runs forward\'s 12, said; without the images\' size it asks for them', async () => {
  const text = fixtureText('raft_pairs_config.py');
  const defaults = await estimateText(text.replace(', num_flow_updates=args.iters', ''), '/tmp/raft_default.py');
  assert.equal(returnedFlows(defaults, 320, 448), 12);
  assert.ok(defaults.assumptions.some((a) => a.includes('num_flow_updates') && a.includes('12')), defaults.assumptions.join('\n'));
  const unsized = await estimateText(text.replace(/torch\.rand\(3, args\.height, args\.width\)/g, 'torch.load(path)')
    .replace('torch.randn(2, args.height, args.width)', 'torch.load(path)'), '/tmp/raft_unsized.py');
  assert.ok(unsized.unresolved && /size of the images/.test(unsized.unresolved.reason), JSON.stringify(unsized.unresolved));
});

test('AlexNet, SqueezeNet, ShuffleNetV2 and MNASNet by name: torchvision\'s exact parameter counts with other heads', async () => {
  const counts: Array<[string, number]> = [['alexnet', 61_100_840], ['squeezenet1_0', 1_248_424], ['squeezenet1_1', 1_235_496],
    ['shufflenet_v2_x0_5', 1_366_792], ['shufflenet_v2_x1_0', 2_278_604], ['shufflenet_v2_x2_0', 7_393_996], ['mnasnet0_5', 2_218_512], ['mnasnet1_3', 6_282_256]];
  for (const [name, count] of counts) {
    const spec = findVisionModel(name)!.build(224, 1000);
    assert.ok(spec.kind === 'layers' && spec.parameters === count, name);
  }
  const script = (make: string) => `import torch\nimport torch.nn.functional as F\nimport torchvision\nmodel = torchvision.models.${make}.cuda()\n` +
    'opt = torch.optim.SGD(model.parameters(), lr=0.01)\nfor step in range(3):\n    x = torch.randn(32, 3, 224, 224, device="cuda")\n' +
    '    y = torch.randint(0, 10, (32,), device="cuda")\n    loss = F.cross_entropy(model(x), y)\n    opt.zero_grad()\n    loss.backward()\n    opt.step()\n';
  const shuffle = await estimateText(script('shufflenet_v2_x1_0(num_classes=10)'), '/tmp/shufflenet.py');
  assert.equal(shuffle.detected.parameters, 2_278_604 - 1024 * 990 - 990);
  // SqueezeNet's classifier is a 1x1 convolution to the classes: 512 weights and a bias each.
  const squeeze = await estimateText(script('squeezenet1_1(num_classes=10)'), '/tmp/squeezenet.py');
  assert.equal(squeeze.detected.parameters, 1_235_496 - 513 * 990);
});

/** A script that runs one of the probe's rows (test/gpu/estimator/probe_cat12.py) as the probe ran it. */
function probeScript(row: Record<string, number | string>): string | undefined {
  const name = String(row.row);
  const adamw = 'opt = torch.optim.AdamW(model.parameters(), lr=1e-4)\nfor step in range(2):\n';
  const stepEnd = '    opt.zero_grad(set_to_none=True)\n    loss.backward()\n    opt.step()\n';
  if (/^raft_.*_train$/.test(name)) {
    const model = name.replace('_train', '');
    const pair = `torch.rand(${row.batch}, 3, ${row.h}, ${row.w}, device="cuda")`;
    return `import torch\nfrom torchvision.models.optical_flow import ${model}\nmodel = ${model}().cuda().train()\n${adamw}` +
      `    a = ${pair}\n    b = ${pair}\n    flow = torch.randn(${row.batch}, 2, ${row.h}, ${row.w}, device="cuda")\n` +
      `    preds = model(a, b, num_flow_updates=${row.updates})\n    loss = sum((p - flow).abs().mean() for p in preds)\n${stepEnd}`;
  }
  if (/^mvit_.*_train/.test(name)) {
    const model = name.replace(/_train.*/, '');
    const forward = /bf16/.test(name) ? '    with torch.autocast("cuda", dtype=torch.bfloat16):\n        loss = F.cross_entropy(model(x), y)\n'
      : '    loss = F.cross_entropy(model(x), y)\n';
    return `import torch\nimport torch.nn.functional as F\nfrom torchvision.models.video import ${model}\nmodel = ${model}().cuda().train()\n${adamw}` +
      `    x = torch.randn(${row.batch}, 3, 16, 224, 224, device="cuda")\n    y = torch.randint(0, 400, (${row.batch},), device="cuda")\n${forward}${stepEnd}`;
  }
  if (/^mvit_.*_infer/.test(name)) {
    return 'import torch\nfrom torchvision.models.video import mvit_v2_s\nmodel = mvit_v2_s().cuda().eval()\nwith torch.inference_mode():\n    for step in range(2):\n' +
      `        x = torch.randn(${row.batch}, 3, 16, 224, 224, device="cuda")\n        with torch.autocast("cuda", dtype=torch.bfloat16):\n            out = model(x)\n`;
  }
  if (/^cls_/.test(name)) {
    const model = name.replace(/^cls_/, '').replace(/_train$/, '');
    return `import torch\nimport torch.nn.functional as F\nimport torchvision\nmodel = torchvision.models.${model}().cuda().train()\n${adamw}` +
      `    x = torch.randn(${row.batch}, 3, 224, 224, device="cuda")\n    y = torch.randint(0, 1000, (${row.batch},), device="cuda")\n` +
      `    loss = F.cross_entropy(model(x), y)\n${stepEnd}`;
  }
  return undefined;
}

test('the probe\'s H200 step peaks (test/gpu/estimator/results/probe_cat12.jsonl) are met within 8% by every new family', async () => {
  const rows = fs.readFileSync(path.join(repoRoot, 'test', 'gpu', 'estimator', 'results', 'probe_cat12.jsonl'), 'utf8').trim().split('\n')
    .map((line) => JSON.parse(line) as Record<string, number | string>);
  let checked = 0;
  for (const row of rows) {
    const script = probeScript(row);
    if (!script) continue;
    const result = await estimateText(script, `/tmp/${String(row.row)}.py`);
    // The step's peak: what was allocated before the measured step (weights, optimizer state, inputs) and its most over that.
    const measured = (Number(row.base_mib) + Math.max(Number(row.fwd_peak_over_mib), Number(row.bwd_peak_over_mib))) * 2 ** 20;
    const error = (result.peakAllocated ?? 0) / measured - 1;
    assert.ok(Math.abs(error) <= 0.08, `${String(row.row)} batch ${row.batch}: ${(error * 100).toFixed(1)}%`);
    checked++;
  }
  assert.ok(checked >= 13, `${checked} rows`);
});

test('timm\'s ResNet-D by name: a deep stem and average-pooled shortcuts, the published counts (19,232 more than the ResNet\'s stem)', async () => {
  for (const [name, plain] of [['resnet18d', 'resnet18'], ['resnet34d', 'resnet34'], ['resnet50d', 'resnet50'], ['resnet101d', 'resnet101'], ['resnet152d', 'resnet152']]) {
    const d = findVisionModel(name)!.build(224, 1000);
    const base = findVisionModel(plain)!.build(224, 1000);
    assert.ok(d.kind === 'layers' && base.kind === 'layers' && d.parameters - base.parameters === 19_232, name);
    // The deep stem's three convolutions at half the image's side keep more than the single 7x7's output.
    assert.ok(d.kind === 'layers' && base.kind === 'layers' && d.savedElementsPerSample > base.savedElementsPerSample, name);
  }
  const result = await estimateText('import timm\nimport torch\nmodel = timm.create_model("resnet50d", num_classes=10).cuda()\n' +
    'opt = torch.optim.SGD(model.parameters(), lr=0.1)\nfor step in range(3):\n    x = torch.randn(64, 3, 224, 224, device="cuda")\n' +
    '    loss = model(x).logsumexp(-1).mean()\n    opt.zero_grad()\n    loss.backward()\n    opt.step()\n', '/tmp/resnet50d.py');
  assert.equal(result.unresolved, undefined);
  assert.equal(result.detected.parameters, 25_576_264 - 2048 * 990 - 990);
  assert.equal(findVisionModel('regnet_y_128gf')!.build(224, 1000).kind === 'layers' && (findVisionModel('regnet_y_128gf')!.build(224, 1000) as { parameters: number }).parameters, 644_812_894);
});
