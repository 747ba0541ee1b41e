import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import * as fs from 'node:fs';
import * as os from 'node:os';
import { runEstimate } from '../../server/src/cli/estimate';
import { fixturesDir, repoRoot } from './helpers';

async function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runEstimate(args, { stdout: (s) => { stdout += s; }, stderr: (s) => { stderr += s; } });
  return { code, stdout, stderr };
}

test('--json prints the contract object with 1-based lines', async () => {
  const { code, stdout, stderr } = await run([path.join(repoRoot, 'examples', 'train_gpt2.py'), '--json', '--gpu', 'RTX 4090']);
  assert.equal(code, 0, stderr);
  const json = JSON.parse(stdout) as Record<string, unknown> & { detected: Record<string, unknown>; fits: Array<Record<string, unknown>> };
  for (const key of ['file', 'detected', 'breakdown', 'peakAllocated', 'peakReserved', 'cudaContext', 'fits', 'assumptions']) assert.ok(key in json, key);
  assert.equal('config' in json, false);
  assert.deepEqual(json.detected.model, { name: 'gpt2', source: 'catalog', line: 39 });
  assert.deepEqual(json.detected.batchSize, { value: 8, line: 13, how: 'argparse-default' });
  assert.deepEqual(json.detected.seqLen, { value: 512, line: 18, how: 'literal' });
  assert.deepEqual(json.detected.precision, { value: 'bf16-amp', line: 53, how: 'literal' });
  assert.equal(json.fits.length, 1);
  assert.equal(json.fits[0].gpu, 'RTX 4090');
  assert.equal(json.fits[0].capacity, 25_757_220_864);
  assert.ok((json.fits[0].maxBatchSize as number) >= 8);
});

test('options override what was detected; overridden values carry no line', async () => {
  const { code, stdout } = await run([path.join(fixturesDir, 'hf_bert_amp.py'), '--json', '--batch-size', '64', '--seq-len', '256',
    '--precision', 'bf16', '--optimizer', 'sgd', '--checkpointing', 'on', '--accumulation', '2', '--gpus', '4', '--strategy', 'zero3']);
  assert.equal(code, 0);
  const d = JSON.parse(stdout).detected;
  assert.deepEqual(d.batchSize, { value: 64, line: null, how: 'option' });
  assert.deepEqual(d.seqLen, { value: 256, line: null, how: 'option' });
  assert.equal(d.precision.value, 'bf16');
  assert.equal(d.optimizer.value, 'sgd');
  assert.equal(d.checkpointing, true);
  assert.equal(d.accumulation, 2);
  assert.equal(d.gpus, 4);
  assert.equal(d.strategy, 'zero3');
});

test('ZeRO-3 over 4 GPUs needs less per GPU than one GPU', async () => {
  const one = JSON.parse((await run([path.join(fixturesDir, 'lora_llama.py'), '--json', '--optimizer', 'adamw', '--precision', 'bf16'])).stdout);
  const file = path.join(repoRoot, 'examples', 'train_gpt2.py');
  const single = JSON.parse((await run([file, '--json'])).stdout);
  const sharded = JSON.parse((await run([file, '--json', '--gpus', '4', '--strategy', 'zero3'])).stdout);
  assert.ok(sharded.breakdown.optimizerStates < single.breakdown.optimizerStates / 3);
  assert.ok(sharded.peakAllocated < single.peakAllocated);
  assert.ok(one.detected.trainableParameters < one.detected.parameters / 100);
});

test('the table names each value with its line, the assumptions and the fit', async () => {
  const { code, stdout } = await run([path.join(fixturesDir, 'eval_gpt2.py'), '--gpu', 'T4']);
  assert.equal(code, 0);
  assert.match(stdout, /batch size\s+8\s+line 7/);
  assert.match(stdout, /Assumptions/);
  assert.match(stdout, /seq_len not found/);
  assert.match(stdout, /T4\s+15\.00 GiB/);
});

test('usage and I/O errors exit 2 with a message on stderr and nothing on stdout', async () => {
  for (const args of [[], ['a.py', 'b.py'], ['x.py', '--batch-size', '0'], ['x.py', '--precision', 'int3'], ['x.py', '--bogus'],
    [path.join(fixturesDir, 'does-not-exist.py')]]) {
    const { code, stdout, stderr } = await run(args);
    assert.equal(code, 2, args.join(' '));
    assert.equal(stdout, '');
    assert.ok(stderr.length > 0);
  }
});

test('a leak in the evaluation loop is in the estimate: growth per batch at the eval loader\'s own batch size', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'oomguard-growth-'));
  const script = path.join(dir, 'leak.py');
  fs.writeFileSync(script, [
    'import torch',
    'import torch.nn as nn',
    'from torch.utils.data import DataLoader, TensorDataset',
    'model = nn.Sequential(nn.Linear(1024, 4096), nn.ReLU(), nn.Linear(4096, 1000)).cuda()',
    'train = DataLoader(TensorDataset(torch.randn(640, 1024), torch.randint(0, 1000, (640,))), batch_size=32)',
    'val = DataLoader(TensorDataset(torch.randn(640, 1024), torch.randint(0, 1000, (640,))), batch_size=64)',
    'opt = torch.optim.SGD(model.parameters(), lr=0.1)',
    'for x, y in train:',
    '    opt.zero_grad()',
    '    nn.functional.cross_entropy(model(x), y).backward()',
    '    opt.step()',
    'def evaluate(loader):',
    '    outs = []',
    '    for x, y in loader:',
    '        outs.append(model(x))',
    '    return torch.cat(outs)',
    'evaluate(val)',
    '',
  ].join('\n'));
  const json = JSON.parse((await run([script, '--gpu', 'RTX 4090', '--json'])).stdout) as { growth?: { bytesPerBatch: number; line: number; batchesUntilFull: number } };
  assert.ok(json.growth, 'no growth');
  assert.equal(json.growth.line, 15);
  // The graph of one 64-sample eval batch: the ReLU output (4,096) and the logits (1,000) per sample, fp32. At the
  // training loader's 32 it would be half of that.
  assert.ok(json.growth.bytesPerBatch >= 64 * (4096 + 1000) * 4, String(json.growth.bytesPerBatch));
  assert.ok(json.growth.batchesUntilFull > 0);
});

test('a leak in a loop that runs no backward sits beside the state that outlives the step (heldBeside), one in the training loop beside the step', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'oomguard-beside-'));
  const script = (evaluation: boolean) => {
    const file = path.join(dir, evaluation ? 'eval_leak.py' : 'train_leak.py');
    fs.writeFileSync(file, [
      'import torch',
      'import torch.nn as nn',
      'model = nn.Sequential(nn.Linear(1024, 4096), nn.ReLU(), nn.Linear(4096, 1000)).cuda()',
      'opt = torch.optim.Adam(model.parameters())',
      'kept = []',
      'for step in range(10):',
      '    x = torch.randn(256, 1024, device="cuda")',
      '    y = torch.randint(0, 1000, (256,), device="cuda")',
      '    out = model(x)',
      ...(evaluation ? [] : ['    kept.append(out)']),
      '    opt.zero_grad()',
      '    nn.functional.cross_entropy(out, y).backward()',
      '    opt.step()',
      ...(evaluation ? ['for step in range(5):', '    kept.append(model(torch.randn(256, 1024, device="cuda")))'] : []),
      '',
    ].join('\n'));
    return file;
  };
  type Json = { peakAllocated: number; breakdown: { weights: number; optimizerStates: number }; growth?: { heldBeside?: number } };
  const evaluation = JSON.parse((await run([script(true), '--json'])).stdout) as Json;
  const training = JSON.parse((await run([script(false), '--json'])).stdout) as Json;
  assert.ok(evaluation.growth && training.growth, 'no growth');
  // Weights, their gradients and Adam's two moments: 4 x the weights, well under the step's peak.
  const weights = evaluation.breakdown.weights;
  assert.ok(Math.abs(evaluation.growth.heldBeside! - 4 * weights) < 0.01 * weights, `${evaluation.growth.heldBeside} vs ${4 * weights}`);
  assert.ok(evaluation.growth.heldBeside! < evaluation.peakAllocated);
  assert.equal(training.growth.heldBeside, undefined);
});

test('an evaluation leak after training loops that call zero_grad() after their step sits beside no gradients', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'oomguard-freed-'));
  const script = (zeroLast: boolean) => {
    const file = path.join(dir, zeroLast ? 'zero_after.py' : 'zero_before.py');
    const zero = '    adam.zero_grad()';
    fs.writeFileSync(file, [
      'import torch',
      'import torch.nn as nn',
      'net = nn.Sequential(nn.Linear(2048, 2048), nn.GELU(), nn.Linear(2048, 512)).cuda()',
      'adam = torch.optim.Adam(net.parameters())',
      'for step in range(4):',
      ...(zeroLast ? [] : [zero]),
      '    x = torch.randn(128, 2048, device="cuda")',
      '    net(x).pow(2).mean().backward()',
      '    adam.step()',
      ...(zeroLast ? [zero] : []),
      'outs = []',
      'for step in range(3):',
      '    outs.append(net(torch.randn(128, 2048, device="cuda")))',
      '',
    ].join('\n'));
    return file;
  };
  type Json = { breakdown: { weights: number }; growth?: { heldBeside?: number } };
  const after = JSON.parse((await run([script(true), '--json'])).stdout) as Json;
  const before = JSON.parse((await run([script(false), '--json'])).stdout) as Json;
  assert.ok(after.growth?.heldBeside && before.growth?.heldBeside, 'no heldBeside');
  const weights = after.breakdown.weights;
  // zero_grad() after step frees the last gradients: the weights and Adam's two moments. Before backward, the last
  // step's gradients stay allocated after the loop.
  assert.ok(Math.abs(after.growth.heldBeside - 3 * weights) < 0.01 * weights, `${after.growth.heldBeside} vs ${3 * weights}`);
  assert.ok(Math.abs(before.growth.heldBeside - 4 * weights) < 0.01 * weights, `${before.growth.heldBeside} vs ${4 * weights}`);
});

test('the largest batch is capped at 65,536 (printed ≥ 65536) and is null when not even one sample fits', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'oomguard-maxbatch-'));
  const script = path.join(dir, 'tiny.py');
  // 4-16-1 MLP on 4 features: about 100 parameters, a few bytes a sample; every catalog GPU holds far more than 65,536.
  fs.writeFileSync(script, [
    'import torch, torch.nn as nn',
    'model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1)).cuda()',
    'opt = torch.optim.SGD(model.parameters(), lr=0.1)',
    'for step in range(10):',
    '    x = torch.randn(32, 4, device="cuda")',
    '    loss = model(x).pow(2).mean()',
    '    loss.backward()',
    '    opt.step()',
    '    opt.zero_grad()',
    '',
  ].join('\n'));
  const tiny = await run([script, '--json']);
  const tinyFits = JSON.parse(tiny.stdout).fits as Array<{ maxBatchSize: number | null }>;
  assert.ok(tinyFits.length > 0);
  for (const fit of tinyFits) assert.equal(fit.maxBatchSize, 65_536);
  const table = await run([script]);
  assert.match(table.stdout, /≥ 65536/);
  assert.doesNotMatch(table.stdout, /\b(6553[7-9]|655[4-9]\d|65[6-9]\d\d|6[6-9]\d{3}|[7-9]\d{4}|\d{6,})\b/);
  // 100,000 x 100,000 weights (10^10 parameters, 40 GB in fp32) and their Adam states cannot fit a 24 GB card at any batch.
  const huge = path.join(dir, 'huge.py');
  fs.writeFileSync(huge, fs.readFileSync(script, 'utf8').replace('nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))', 'nn.Sequential(nn.Linear(100000, 100000))')
    .replace('torch.optim.SGD', 'torch.optim.Adam').replace('(32, 4,', '(32, 100000,'));
  const big = await run([huge, '--json', '--gpu', 'RTX 4090']);
  const bigJson = JSON.parse(big.stdout) as { detected: { parameters: number }; fits: Array<{ fits: boolean; maxBatchSize: number | null }> };
  assert.equal(bigJson.detected.parameters, 100000 * 100000 + 100000);
  assert.equal(bigJson.fits[0]!.fits, false);
  assert.equal(bigJson.fits[0]!.maxBatchSize, null);
  assert.match((await run([huge, '--gpu', 'RTX 4090'])).stdout, /RTX 4090 .* no +none/);
  fs.rmSync(dir, { recursive: true, force: true });
});

