import { test } from 'node:test';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { errorStats } from '../../server/src/estimator/calibration';
import { estimateText } from './helpers';
import assert from 'node:assert/strict';
import { MODEL_CATALOG, findCatalogModel } from '../../server/src/estimator/catalog/models';
import { VISION_CATALOG, findVisionModel } from '../../server/src/estimator/catalog/vision';
import { GPU_CATALOG, findGpu } from '../../server/src/estimator/catalog/gpus';
import { countTransformerParameters } from '../../server/src/estimator/transformer';
import type { TransformerSpec } from '../../server/src/estimator/types';

/** Published counts are of the base model for encoders (no task head) and of the LM for decoders. */
function publishedTask(spec: TransformerSpec): TransformerSpec {
  return ['bert', 'distilbert', 'deberta', 'albert'].includes(spec.family) ? { ...spec, task: 'base' } : spec;
}

test('exact parameter counts of the reference checkpoints', () => {
  assert.equal(countTransformerParameters(publishedTask(findCatalogModel('bert-base-uncased')!.spec)).total, 109_482_240);
  assert.equal(countTransformerParameters(findCatalogModel('gpt2')!.spec).total, 124_439_808);
});

test('every catalog config implies its published parameter count within 2%', () => {
  for (const entry of MODEL_CATALOG) {
    // A checkpoint whose own lm_head transformers 5 ties on load publishes that head in its count.
    const count = countTransformerParameters(publishedTask(entry.spec)).total + (entry.headTiedOnLoad ? entry.spec.vocab * entry.spec.hidden : 0);
    const error = Math.abs(count / entry.publishedParameters - 1);
    assert.ok(error <= 0.02, `${entry.id}: ${count} vs published ${entry.publishedParameters} (${(error * 100).toFixed(2)}%)`);
  }
});

test('torchvision/timm models built layer by layer match their published parameter counts', () => {
  for (const entry of VISION_CATALOG) {
    // Segmentation models publish the VOC-label weights' count: 21 classes with the auxiliary head.
    const spec = entry.segmentation ? entry.build(224, 21, { auxLoss: true }) : entry.build(224, 1000, entry.publishedOptions);
    const count = spec.kind === 'layers' ? spec.parameters : countTransformerParameters(spec).total;
    assert.ok(Math.abs(count / entry.publishedParameters - 1) <= 0.02, `${entry.names[0]}: ${count} vs ${entry.publishedParameters}`);
  }
});

test('ResNet-50 keeps the per-image activations gpu-truth measured (85.8 MB/img at 224, fp32)', () => {
  const spec = findVisionModel('resnet50')!.build(224, 1000);
  assert.equal(spec.kind, 'layers');
  if (spec.kind !== 'layers') return;
  const perImage = spec.savedElementsPerSample * 4 + spec.fixedBytesPerSample;
  // gpu-truth rn50_train_b32: act_saved_first_fwd = 2,744.7 MB for 32 images, including the 0.6 MB input of each.
  assert.ok(Math.abs(perImage / (2744.7e6 / 32 - 602_112) - 1) < 0.02, `${perImage}`);
  const bigger = findVisionModel('resnet50')!.build(448, 1000);
  assert.ok(bigger.kind === 'layers' && Math.abs(bigger.savedElementsPerSample / spec.savedElementsPerSample - 4) < 0.05);
});

test('model ids resolve with or without the organisation prefix', () => {
  assert.equal(findCatalogModel('openai-community/gpt2')?.spec.hidden, 768);
  assert.equal(findCatalogModel('Llama-3.2-1B')?.id, 'meta-llama/Llama-3.2-1B');
  assert.equal(findCatalogModel('no-such/model'), undefined);
  assert.equal(findVisionModel('timm/resnet50.a1_in1k')?.names[0], 'resnet50');
});

test('GPU names as users type them', () => {
  assert.equal(findGpu('RTX 4090')?.capacity, 25_757_220_864);
  assert.equal(findGpu('4090')?.name, 'RTX 4090');
  assert.equal(findGpu('A100 80GB')?.name, 'A100 80GB');
  assert.equal(findGpu('a100-80gb')?.name, 'A100 80GB');
  assert.equal(findGpu('H100')?.name, 'H100 80GB');
  assert.equal(findGpu('NVIDIA H200')?.name, 'H200');
  assert.equal(findGpu('rtx3060')?.name, 'RTX 3060');
  assert.equal(findGpu('Voodoo 5'), undefined);
  const names = ['RTX 3060', 'RTX 3090', 'RTX 4090', 'RTX A5000', 'T4', 'A10G', 'L4', 'A100 40GB', 'A100 80GB', 'H100 80GB', 'H200'];
  for (const name of names) assert.ok(GPU_CATALOG.some((g) => g.name === name), name);
  const sorted = [...GPU_CATALOG].sort((a, b) => a.capacity - b.capacity);
  assert.ok(sorted[sorted.length - 1].capacity > 140e9 && findGpu('RTX 3060')!.capacity < 13e9);
});

test('Swin and RegNet by name (timm and torchvision): exact parameter counts and H200 peaks (test/gpu/estimator/results/vision.json)', async () => {
  interface VisionRun { source: string; model: string; batch: number; precision: string; params_10_classes: number; step_peaks: number[]; error?: string }
  const runs = (JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'gpu', 'estimator', 'results', 'vision.json'), 'utf8')) as { runs: VisionRun[] }).runs;
  const errors: number[] = [];
  for (const run of runs) {
    if (run.error || !findVisionModel(run.model)) continue;
    const make = run.source === 'timm' ? `import timm\nmodel = timm.create_model("${run.model}", num_classes=10).cuda()`
      : `import torchvision\nmodel = torchvision.models.${run.model}(num_classes=10).cuda()`;
    const forward = run.precision === 'bf16-amp'
      ? '    with torch.autocast("cuda", dtype=torch.bfloat16):\n        loss = F.cross_entropy(model(x), y)\n'
      : '    loss = F.cross_entropy(model(x), y)\n';
    const script = `import torch\nimport torch.nn.functional as F\n${make}\nopt = torch.optim.AdamW(model.parameters(), lr=1e-4)\n` +
      `for step in range(3):\n    x = torch.randn(${run.batch}, 3, 224, 224, device="cuda")\n    y = torch.randint(0, 10, (${run.batch},), device="cuda")\n` +
      `${forward}    opt.zero_grad()\n    loss.backward()\n    opt.step()\n`;
    const result = await estimateText(script, `${run.model}.py`);
    assert.equal(result.detected.parameters, run.params_10_classes, `${run.model} parameters`);
    errors.push(result.peakAllocated / Math.max(...run.step_peaks) - 1);
  }
  assert.ok(errors.length >= 40, `${errors.length} runs`);
  const stats = errorStats(errors);
  assert.ok(stats.medianAbs <= 0.06 && stats.worstOver <= 0.15 && stats.worstUnder >= -0.15, JSON.stringify(stats));
});
