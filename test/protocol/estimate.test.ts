// Protocol tests of the memory estimate: the built server answers oomguard/estimate, CodeLens and hovers, and
// sizes the leaks it reports, all from one document version.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, test } from 'node:test';
import type { CodeLens, Diagnostic, Hover, MarkupContent } from 'vscode-languageserver-protocol/node';
import { ESTIMATE_REQUEST, MINOR_SAVING_FRACTION, SHOW_MEMORY_ESTIMATE_COMMAND } from '../../server/src/protocol';
import type { EstimateResponse } from '../../server/src/protocol';
import { formatBytes } from '../../server/src/engine/bytes';
import { parsePython } from '../../server/src/engine/parser';
import { copyTree } from '../../server/src/engine/syntax-tree';
import { keptBytes } from '../../server/src/estimator/growth';
import { configFromDetection, detectConfig } from '../../server/src/estimator/index';
import { repoRoot } from '../helpers/analysis';
import { startServer } from '../helpers/lsp-client';
import type { TestClient } from '../helpers/lsp-client';

const file = path.join(repoRoot, 'examples', 'train_gpt2.py');
const uri = pathToFileURL(file).href;
const text = fs.readFileSync(file, 'utf8');
const lines = text.split('\n');
const lineOf = (needle: string) => lines.findIndex((line) => line.includes(needle));

let client: TestClient;

/** Opens a document in the server; resolves with its first diagnostics. */
async function openDocument(documentUri: string, source: string): Promise<Diagnostic[]> {
  const published = client.diagnostics(documentUri, 1);
  await client.connection.sendNotification('textDocument/didOpen', { textDocument: { uri: documentUri, languageId: 'python', version: 1, text: source } });
  return published;
}

before(async () => {
  client = await startServer({ settings: { gpu: 'RTX 4090' } });
  await openDocument(uri, text);
});

after(async () => {
  await client.close();
});

test('oomguard/estimate answers the detected configuration with its lines and the fit on the chosen GPU', async () => {
  const response = await client.connection.sendRequest<EstimateResponse>(ESTIMATE_REQUEST, { textDocument: { uri } });
  assert.equal(response.version, 1);
  assert.equal(response.modelName, 'gpt2');
  assert.equal(response.gpu?.name, 'RTX 4090');
  const segments = Object.values(response.segments).reduce((sum, value) => sum + value, 0);
  assert.ok(Math.abs(segments - response.total) < 1, 'the bar segments add up to the total');
  assert.equal(response.total, response.peakReserved + response.segments.cudaContext);
  const batch = response.inputs.find((input) => input.key === 'batchSize');
  assert.deepEqual({ line: batch?.line, origin: batch?.origin, value: batch?.value }, { line: lineOf('--batch-size'), origin: 'detected', value: '8' });
  assert.equal(response.inputs.find((input) => input.key === 'model')?.line, lineOf('GPT2LMHeadModel.from_pretrained'));
  assert.ok(response.maxBatchSize !== null && response.maxBatchSize > 8);
  // The script already uses bf16 autocast: no AMP suggestion, but checkpointing saves activations.
  assert.equal(response.suggestions.some((s) => s.id === 'amp'), false);
  const checkpointing = response.suggestions.find((s) => s.id === 'checkpointing');
  assert.ok(checkpointing && checkpointing.saving > 0);
  assert.equal(checkpointing.refactor?.kind, 'refactor.rewrite');
});

test('what-if values change the estimate and are marked as such; malformed ones are dropped', async () => {
  const base = await client.connection.sendRequest<EstimateResponse>(ESTIMATE_REQUEST, { textDocument: { uri } });
  const bigger = await client.connection.sendRequest<EstimateResponse>(ESTIMATE_REQUEST, {
    textDocument: { uri },
    overrides: { batchSize: 32, precision: 'fp32', gpu: 'T4', seqLen: -3, optimizer: '<b>' },
  });
  assert.ok(bigger.segments.activations > base.segments.activations);
  assert.equal(bigger.current.batchSize, 32);
  assert.equal(bigger.current.seqLen, base.current.seqLen);
  assert.equal(bigger.current.optimizer, base.current.optimizer);
  assert.equal(bigger.gpu?.name, 'T4');
  assert.equal(bigger.fits, false);
  assert.equal(bigger.inputs.find((input) => input.key === 'batchSize')?.origin, 'overridden');
  assert.ok(bigger.suggestions.some((s) => s.id === 'amp' && s.saving > 0));
  assert.ok(bigger.suggestions.some((s) => s.id === 'smaller-batch' && s.overrides.batchSize === bigger.maxBatchSize));
});

test('a change that saves under 2% of the peak is marked minor and listed after the real ones', async () => {
  const full = await client.connection.sendRequest<EstimateResponse>(ESTIMATE_REQUEST, { textDocument: { uri } });
  const real = full.suggestions.find((s) => s.id === 'checkpointing');
  assert.ok(real && real.saving >= full.total * MINOR_SAVING_FRACTION && !real.minor, 'checkpointing at batch 8 x 512 tokens is a real saving');
  // Four samples of 16 tokens: the activations are a sliver of the peak, and so is what halving the batch saves.
  const tiny = await client.connection.sendRequest<EstimateResponse>(ESTIMATE_REQUEST, { textDocument: { uri }, overrides: { batchSize: 4, seqLen: 16 } });
  const little = tiny.suggestions.find((s) => s.id === 'accumulation');
  assert.ok(little, 'accumulation still saves something');
  assert.ok(little.saving < tiny.total * MINOR_SAVING_FRACTION, `accumulation saves ${little.saving} of ${tiny.total}`);
  assert.equal(little.minor, true);
  for (const s of tiny.suggestions) assert.equal(s.minor, s.id !== 'fix-leak' && s.saving < tiny.total * MINOR_SAVING_FRACTION, s.id);
  const firstMinor = tiny.suggestions.findIndex((s) => s.minor);
  assert.ok(tiny.suggestions.slice(firstMinor).every((s) => s.minor), 'no real suggestion after a minor one');
});

test('CodeLens above the training and evaluation loops shows the peak and the fit, and opens the panel', async () => {
  const lenses = await client.connection.sendRequest<CodeLens[]>('textDocument/codeLens', { textDocument: { uri } });
  const estimate = await client.connection.sendRequest<EstimateResponse>(ESTIMATE_REQUEST, { textDocument: { uri } });
  assert.deepEqual(lenses.map((lens) => lens.range.start.line), [lineOf('enumerate(train_loader)'), lineOf('for input_ids in eval_loader')]);
  const [training, inference] = lenses;
  const peak = (estimate.total / 1024 ** 3).toFixed(1);
  assert.equal(training!.command?.title, `≈ ${peak} GiB peak · fits RTX 4090 (24 GiB) · Open memory panel`);
  assert.match(inference!.command!.title, /^≈ [\d.]+ GiB peak \(inference\) · fits RTX 4090 \(24 GiB\) · Open memory panel$/);
  assert.equal(training!.command?.command, SHOW_MEMORY_ESTIMATE_COMMAND);
  assert.deepEqual(training!.command?.arguments, [uri]);
});

test('hover on batch size and model id says what they contribute', async () => {
  const batchLine = lineOf('--batch-size');
  const hover = await client.connection.sendRequest<Hover | null>('textDocument/hover', {
    textDocument: { uri }, position: { line: batchLine, character: lines[batchLine]!.indexOf('default=8') + 'default='.length },
  });
  const value = (hover?.contents as MarkupContent).value;
  assert.match(value, /\*\*batch size 8\*\*: activations [\d.]+ GiB of the [\d.]+ GiB peak; each sample adds about [\d.]+ [GM]iB\. The largest batch that fits RTX 4090 is \d+\./);
  const modelLine = lineOf('GPT2LMHeadModel.from_pretrained');
  const modelHover = await client.connection.sendRequest<Hover | null>('textDocument/hover', {
    textDocument: { uri }, position: { line: modelLine, character: lines[modelLine]!.indexOf('"gpt2"') + 2 },
  });
  assert.match((modelHover?.contents as MarkupContent).value, /\*\*gpt2\*\*: 124\.4M parameters; weights/);
  const blank = await client.connection.sendRequest<Hover | null>('textDocument/hover', { textDocument: { uri }, position: { line: 0, character: 0 } });
  assert.equal(blank, null);
});

/**
 * Diagnostics come first without waiting for the estimate; once it is computed the document is published again
 * with sizes. Resolves with the first publication whose findings carry a size.
 */
async function sizedDiagnostics(uri: string, first: Promise<Diagnostic[]>): Promise<Diagnostic[]> {
  let diagnostics = await first;
  for (let i = 0; i < 5 && !diagnostics.some((d) => /keeps about/.test(String(d.message))); i++) diagnostics = await client.nextDiagnostics(uri);
  return diagnostics;
}

test('leak findings say how much they keep per batch, from the estimate of the same version', async () => {
  const leakyUri = 'file:///work/leaky_eval.py';
  const source = [
    'import torch',
    'from transformers import GPT2LMHeadModel',
    'model = GPT2LMHeadModel.from_pretrained("gpt2").cuda()',
    'optimizer = torch.optim.AdamW(model.parameters())',
    'for batch in train_loader:',
    '    optimizer.zero_grad()',
    '    out = model(input_ids=batch, labels=batch)',
    '    out.loss.backward()',
    '    optimizer.step()',
    'model.eval()',
    'kept = []',
    'for batch in eval_loader:',
    '    logits = model(input_ids=batch).logits',
    '    kept.append(logits)',
    '',
  ].join('\n');
  const diagnostics = await sizedDiagnostics(leakyUri, openDocument(leakyUri, source));
  const oom104 = diagnostics.find((d) => d.code === 'OOM104');
  const oom101 = diagnostics.find((d) => d.code === 'OOM101');
  assert.match(String(oom104?.message), /keeps about [\d.]+ [GM]iB per batch \(the graph and the activations it saved\)\.$/);
  assert.match(String(oom101?.message), /keeps about [\d.]+ [GM]iB per batch \(the graph and the activations it saved\)\.$/);
  const estimate = await client.connection.sendRequest<EstimateResponse>(ESTIMATE_REQUEST, { textDocument: { uri: leakyUri } });
  const leaks = estimate.suggestions.filter((s) => s.id === 'fix-leak');
  assert.deepEqual(leaks.map((s) => s.refactor?.kind), ['quickfix', 'quickfix']);
  assert.ok(leaks.every((s) => s.saving > 0));
});

test('a leak in a loop whose loader batches differently is sized at that batch (the sizes come from the estimate\'s worker)', async () => {
  const evalUri = 'file:///work/eval_batches.py';
  const source = [
    'import torch',
    'from torch.utils.data import DataLoader',
    'from transformers import GPT2LMHeadModel',
    'model = GPT2LMHeadModel.from_pretrained("gpt2").cuda()',
    'optimizer = torch.optim.AdamW(model.parameters())',
    'train_loader = DataLoader(train_set, batch_size=8)',
    'eval_loader = DataLoader(eval_set, batch_size=32)',
    'for batch in train_loader:',
    '    optimizer.zero_grad()',
    '    out = model(input_ids=batch, labels=batch)',
    '    out.loss.backward()',
    '    optimizer.step()',
    '    kept_train = out.logits',
    'model.eval()',
    'kept = []',
    'for batch in eval_loader:',
    '    logits = model(input_ids=batch).logits',
    '    kept.append(logits)',
    '',
  ].join('\n');
  // What the estimate gives each loop's batch, computed here on the same text.
  const tree = (await parsePython(source))!;
  const root = copyTree(tree, source);
  tree.delete();
  const config = configFromDetection(detectConfig({ rootNode: root }, source, ''), []);
  const diagnostics = await sizedDiagnostics(evalUri, openDocument(evalUri, source));
  const inEval = diagnostics.find((d) => d.code === 'OOM101' && d.range.start.line === 17);
  assert.ok(inEval, JSON.stringify(diagnostics.map((d) => [d.code, d.range.start.line])));
  assert.ok(String(inEval.message).includes(`keeps about ${formatBytes(keptBytes(config, 'graph', 32)!)} per batch`), String(inEval.message));
  assert.notEqual(keptBytes(config, 'graph', 32), keptBytes(config, 'graph'));
});

test('a model output kept across training steps is sized as the logits it holds', async () => {
  const trainUri = 'file:///work/keeps_logits.py';
  const source = [
    'import torch',
    'from transformers import GPT2LMHeadModel',
    'model = GPT2LMHeadModel.from_pretrained("gpt2").cuda()',
    'optimizer = torch.optim.AdamW(model.parameters())',
    'all_logits = []',
    'for batch in train_loader:',
    '    optimizer.zero_grad()',
    '    out = model(input_ids=batch, labels=batch)',
    '    out.loss.backward()',
    '    optimizer.step()',
    '    all_logits.append(out.logits)',
    '',
  ].join('\n');
  const oom101 = (await sizedDiagnostics(trainUri, openDocument(trainUri, source))).find((d) => d.code === 'OOM101');
  assert.match(String(oom101?.message), /keeps about [\d.]+ [GM]iB per batch \(the output tensor\)\.$/);
});

test('an estimate for a document the server does not have is a clear error', async () => {
  await assert.rejects(
    client.connection.sendRequest(ESTIMATE_REQUEST, { textDocument: { uri: 'file:///nowhere.py' } }),
    /not open in the server/,
  );
});

test('a model the estimator cannot read: no figure anywhere, the reason on a CodeLens and in the estimate error', async () => {
  const unknownUri = 'file:///work/unknown_model.py';
  const source = [
    'import timm',
    'import torch',
    'MODEL = "my_private_net_v7"',
    'model = timm.create_model(MODEL, num_classes=10).cuda()',
    'opt = torch.optim.AdamW(model.parameters())',
    'for x, y in loader:',
    '    opt.zero_grad()',
    '    torch.nn.functional.cross_entropy(model(x), y).backward()',
    '    opt.step()',
    '',
  ].join('\n');
  await openDocument(unknownUri, source);
  const lenses = (await client.connection.sendRequest('textDocument/codeLens', { textDocument: { uri: unknownUri } })) as CodeLens[];
  assert.equal(lenses.length, 1);
  assert.equal(lenses[0]!.range.start.line, 3);
  assert.match(lenses[0]!.command!.title, /^No memory estimate: timm model "my_private_net_v7" is not in the catalog/);
  await assert.rejects(client.connection.sendRequest(ESTIMATE_REQUEST, { textDocument: { uri: unknownUri } }), (error: { message: string; data?: { unresolved?: { line: number } } }) => {
    assert.match(error.message, /model on line 4 could not be read/);
    assert.equal(error.data?.unresolved?.line, 3);
    return true;
  });
  // The panel's field (the CLI's --params): with the parameter count, the weights, gradients and AdamW's two states
  // follow from it: 4 + 4 + 8 bytes for each of 25M fp32 parameters.
  const sized = await client.connection.sendRequest<EstimateResponse>(ESTIMATE_REQUEST, { textDocument: { uri: unknownUri }, overrides: { params: 25e6 } });
  assert.equal(sized.parameters, 25e6);
  assert.equal(sized.segments.weights + sized.segments.gradients + sized.segments.optimizerStates, 16 * 25e6);
});

test('a leak that keeps memory every batch: the estimate and the CodeLens say how much and when the GPU is full', async () => {
  const leakUri = 'file:///work/leaky_eval.py';
  const source = [
    'import torch',
    'import torch.nn as nn',
    'from torch.utils.data import DataLoader, TensorDataset',
    'model = nn.Sequential(nn.Linear(1024, 4096), nn.ReLU(), nn.Linear(4096, 1000)).cuda()',
    'train = DataLoader(TensorDataset(torch.randn(640, 1024), torch.randint(0, 1000, (640,))), batch_size=64)',
    'opt = torch.optim.SGD(model.parameters(), lr=0.1)',
    'history = []',
    'for x, y in train:',
    '    opt.zero_grad()',
    '    out = model(x)',
    '    nn.functional.cross_entropy(out, y).backward()',
    '    opt.step()',
    '    history.append(out)',
    '',
  ].join('\n');
  await openDocument(leakUri, source);
  const response = await client.connection.sendRequest<EstimateResponse>(ESTIMATE_REQUEST, { textDocument: { uri: leakUri } });
  assert.ok(response.growth, 'no growth');
  assert.equal(response.growth.line, 13);
  // The logits of one 64-sample batch, fp32, kept by the list.
  assert.equal(response.growth.bytesPerBatch, 64 * 1000 * 4);
  assert.equal(response.growth.batchesUntilFull, Math.floor((response.gpu!.capacity - response.total) / response.growth.bytesPerBatch));
  const lenses = (await client.connection.sendRequest('textDocument/codeLens', { textDocument: { uri: leakUri } })) as CodeLens[];
  assert.match(lenses[0]!.command!.title, new RegExp(`leak \\+250 KiB per batch \\(line 13\\): out of memory after about ${response.growth.batchesUntilFull} batches`));
});

test('outputs an evaluation keeps under no_grad: the panel\'s growth says how many batches the loop runs and what they hold', async () => {
  const keptUri = 'file:///work/eval_keeps_outputs.py';
  const source = [
    'import torch',
    'import torch.nn as nn',
    'from torch.utils.data import DataLoader, TensorDataset',
    'model = nn.Sequential(nn.Linear(1024, 4096), nn.ReLU(), nn.Linear(4096, 1000)).cuda()',
    'val = DataLoader(TensorDataset(torch.randn(640, 1024)), batch_size=64)',
    'outs = []',
    'with torch.no_grad():',
    '    for i, (x,) in enumerate(val):',
    '        if i >= 5:',
    '            break',
    '        outs.append(model(x.cuda()).softmax(-1))',
    'preds = torch.cat(outs).argmax(-1)',
    '',
  ].join('\n');
  await openDocument(keptUri, source);
  const response = await client.connection.sendRequest<EstimateResponse>(ESTIMATE_REQUEST, { textDocument: { uri: keptUri } });
  assert.ok(response.growth, 'no growth');
  assert.equal(response.growth.line, 11);
  assert.equal(response.growth.bytesPerBatch, 64 * 1000 * 4);
  assert.equal(response.growth.batches, 5);
  // Five batches' probabilities, and their concatenation beside the list.
  assert.equal(response.growth.keptAfterBatches, 2 * 5 * 64 * 1000 * 4);
});
