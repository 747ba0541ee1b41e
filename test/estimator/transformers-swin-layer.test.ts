// transformers' Swin (SwinConfig) keeps other tensors for backward than timm's: its SwinLayer runs the windows through
// F.scaled_dot_product_attention (no probabilities kept), materialises the position bias with the shift's mask only in
// shifted layers, and under autocast casts the fp32 windows to half once per projection. Figures from the H200:
// probe_grads13 (every tensor saved, layer by layer) and probe_hfcfg12 (what a whole model's forward keeps).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { NetBuilder } from '../../server/src/estimator/layers';
import { estimateText, MIB, repoRoot } from './helpers';

interface SavedTensor { part: string; model: string; amp: boolean; module: string; producer: string; bytes_per_sample: number }

const results = path.join(repoRoot, 'test', 'gpu', 'estimator', 'results');
const lines = (file: string) => fs.readFileSync(path.join(results, file), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);

/**
 * Bytes per sample the probe saw one layer of stage 1 keep (56 x 56 tokens, 96 channels, 3 heads), but for the norms'
 * per-row statistics, the half weights autocast casts (counted with the weights) and the broadcast bias (a few KB
 * that do not grow with the batch).
 */
function measuredLayer(block: number, amp: boolean): number {
  const rows = lines('probe_grads13.jsonl') as unknown as SavedTensor[];
  return rows.filter((r) => r.part === 'saved_tensor' && r.model === 'hf_swin_t_drop0.0' && r.amp === amp && r.module.startsWith(`encoder.layers.0.blocks.${block}.`))
    .filter((r) => !(r.producer === 'nograd' && r.module.includes('layernorm')) && r.producer !== 'TBackward0' && r.bytes_per_sample >= 4096)
    .reduce((sum, r) => sum + r.bytes_per_sample, 0);
}

function oneLayer(shifted: boolean) {
  const before = new NetBuilder({ kind: 'image', channels: 96, size: 56 }).build(true);
  const net = new NetBuilder({ kind: 'image', channels: 96, size: 56 });
  net.transformersSwinLayer(3, 7, shifted);
  const after = net.build(true);
  const fp32 = 4 * (after.savedElementsPerSample - before.savedElementsPerSample) + after.fixedBytesPerSample - before.fixedBytesPerSample;
  const autocast = (after.autocastSavedBytesPerSample ?? 0) - (before.autocastSavedBytesPerSample ?? 0) + after.fixedBytesPerSample - before.fixedBytesPerSample;
  return { fp32, autocast };
}

test('one SwinLayer of stage 1: what it keeps per sample, plain and shifted, fp32 and fp16 autocast, as measured tensor by tensor', () => {
  // Plain: 16 C a token (fp32: 64 C bytes; autocast: 40 C bytes) and a log-sum-exp per head and padded query.
  // Shifted: the position bias with the mask, 3 heads x 56 padded keys a token, besides.
  for (const block of [0, 1]) {
    const figures = oneLayer(block === 1);
    assert.equal(figures.fp32, measuredLayer(block, false), `layer ${block} fp32`);
    assert.equal(figures.autocast, measuredLayer(block, true), `layer ${block} autocast`);
  }
});

test('SwinConfig models: what forward keeps and the step peak within the H200 figures of probe_hfcfg12 (timm\'s block kept 17 C and the probabilities)', async () => {
  const measured = lines('probe_hfcfg12.jsonl').filter((r) => r.row === 'swin_t' || r.row === 'swin_s');
  assert.equal(measured.length, 4);
  for (const row of measured) {
    const depths = row.row === 'swin_s' ? 'depths=[2, 2, 18, 2], ' : '';
    const amp = row.precision === 'bf16-amp';
    const forward = amp
      ? '    with torch.autocast("cuda", dtype=torch.bfloat16):\n        loss = model(pixel_values=x, labels=y).loss\n'
      : '    loss = model(pixel_values=x, labels=y).loss\n';
    const script = 'import torch\nfrom transformers import SwinConfig, SwinForImageClassification\n' +
      `model = SwinForImageClassification(SwinConfig(${depths}num_labels=10)).cuda()\n` +
      'optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)\nfor step in range(3):\n' +
      `    x = torch.randn(${row.batch as number}, 3, 224, 224, device="cuda")\n    y = torch.randint(0, 10, (${row.batch as number},), device="cuda")\n` +
      `    optimizer.zero_grad(set_to_none=True)\n${forward}    loss.backward()\n    optimizer.step()\n`;
    const result = await estimateText(script, `/tmp/${row.row as string}_${amp ? 'amp' : 'fp32'}.py`);
    assert.equal(result.detected.parameters, row.params);
    const kept = result.breakdown.activations / ((row.kept_mib as number) * MIB) - 1;
    const peak = result.peakAllocated / ((row.step_peak_mib as number) * MIB) - 1;
    assert.ok(Math.abs(kept) <= 0.02, `${row.row as string} ${row.precision as string}: kept ${(100 * kept).toFixed(1)}%`);
    // Over by backward's transients (the patch embedding's convolution workspace is counted at backward's start).
    assert.ok(peak >= -0.02 && peak <= 0.04, `${row.row as string} ${row.precision as string}: peak ${(100 * peak).toFixed(1)}%`);
  }
});
