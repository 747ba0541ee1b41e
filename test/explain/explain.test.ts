import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { buildExplanation, explainText, findOomErrors, formatBytes, renderMarkdown, resolveFrameFile } from '../../server/src/explain/index';
import { md } from '../../server/src/explain/render';
import { fileLink } from '../../server/src/features/explain';

const repoRoot = path.resolve(__dirname, '..', '..');
const samples = path.join(__dirname, 'samples');
const read = (name: string) => fs.readFileSync(path.join(samples, name), 'utf8');
const MiB = 1024 ** 2;

test('fragmentation that alone explains the failure comes first, with expandable_segments (current wording)', () => {
  const e = buildExplanation(findOomErrors(read('current_gpt2.log'))[0]!);
  const first = e.causes[0]!;
  assert.equal(first.kind, 'fragmentation');
  assert.equal(first.decisive, true);
  assert.match(first.tryThis.join(' '), /expandable_segments:True/);
  // The rest is ordered by the memory each accounts for.
  const rest = e.causes.slice(1).map((c) => c.bytes);
  assert.deepEqual(rest, [...rest].sort((a, b) => b - a));
  const figure = (key: string) => e.figures.find((f) => f.key === key);
  assert.equal(figure('shortfall')?.bytes, Math.round(786 * MiB) - Math.round(412.69 * MiB));
  assert.equal(figure('shortfall')?.computed, true);
  assert.equal(figure('fragmentation')?.computed, false);
  assert.equal(figure('nonPyTorch')?.text, formatBytes(Math.round(23.11 * 1024 ** 3) - Math.round(21.85 * 1024 ** 3) - Math.round(807.56 * MiB)));
});

test('the 2.1 and older wordings get the setting their PyTorch suggests', () => {
  for (const name of ['torchrun_2.1.log', 'legacy_1.13.txt']) {
    const e = buildExplanation(findOomErrors(read(name))[0]!);
    const fragmentation = e.causes.find((c) => c.kind === 'fragmentation');
    assert.ok(fragmentation, name);
    assert.match(fragmentation.tryThis.join(' '), /max_split_size_mb/, name);
  }
});

test('legacy wording: fragmentation and memory outside the allocator are computed from the printed figures', () => {
  const e = buildExplanation(findOomErrors(read('legacy_1.13.txt'))[0]!);
  const fragmentation = e.figures.find((f) => f.key === 'fragmentation')!;
  assert.equal(fragmentation.computed, true);
  assert.equal(fragmentation.bytes, Math.round(188 * MiB) - Math.round(130.35 * MiB));
  const outside = e.figures.find((f) => f.key === 'outside')!;
  assert.equal(outside.bytes, Math.round(7.93 * 1024 ** 3) - Math.round(47.06 * MiB) - Math.round(188 * MiB));
  assert.equal(e.causes[0]!.kind, 'outside-pytorch');
});

test('other processes and a memory fraction are named, each with what to try', () => {
  const e = buildExplanation(findOomErrors(read('shared_gpu_processes.txt'))[0]!);
  const others = e.causes.find((c) => c.kind === 'other-processes')!;
  assert.equal(others.bytes, Math.round(61.82 * 1024 ** 3) + 8 * 1024 ** 3);
  assert.equal(others.decisive, true);
  assert.match(others.tryThis.join(' '), /nvidia-smi/);
  assert.ok(e.causes.some((c) => c.kind === 'memory-limit'));
  assert.ok(e.summary.some((line) => line.includes('process 2752205: 61.82 GiB')));
});

test('an allocation larger than the GPU is the first and decisive cause', () => {
  const e = buildExplanation(findOomErrors(read('wrapped_larger_than_gpu.txt'))[0]!);
  assert.equal(e.causes[0]!.kind, 'larger-than-gpu');
  assert.equal(e.causes[0]!.decisive, true);
  assert.equal(e.causes.some((c) => c.kind === 'request'), false);
});

test('a frame in a script found on this machine brings its estimate; the request matches the fp32 logits', async () => {
  const [e] = await explainText(read('current_gpt2.log'), { roots: [repoRoot] });
  assert.equal(e!.frameFile, path.join(repoRoot, 'examples', 'train_gpt2.py'));
  const s = e!.script!;
  assert.equal(s.model, 'gpt2');
  assert.equal(s.batchSize, 8);
  // 8 × 512 × 50257 × 4 bytes, the loss's fp32 copy of the logits.
  assert.equal(s.matchingTensor?.bytes, 8 * 512 * 50257 * 4);
  assert.ok(s.maxBatchSizeOnThisGpu !== undefined && s.maxBatchSizeOnThisGpu > 0);
  const request = e!.causes.find((c) => c.kind === 'request')!;
  assert.match(request.tryThis.join(' '), /8 × 512 × 50257 × 4 bytes/);
  const markdown = renderMarkdown([e!], (file, line) => `file://${file}#L${line}`);
  assert.match(markdown, /\[\/home\/ada\/runs\/oomguard\/examples\/train_gpt2\.py:62\]\(file:\/\/.*train_gpt2\.py#L62\)/);
  // `<module>` would be eaten as an HTML tag by the preview: it is escaped.
  assert.match(markdown, /\\<module\\>\(\)/);
  assert.match(markdown, /## The script: /);
});

test('findings of the script are listed with their lines', async () => {
  const log = read('current_gpt2.log').replace('/home/ada/runs/oomguard/examples/train_gpt2.py', '/srv/job/examples/leaky_train.py');
  const [e] = await explainText(log, { roots: [repoRoot] });
  assert.equal(e!.frameFile, path.join(repoRoot, 'examples', 'leaky_train.py'));
  assert.ok(e!.script!.findings.length > 0);
  const tensors = e!.causes.find((c) => c.kind === 'live-tensors')!;
  assert.match(tensors.tryThis.join(' '), /OOM1\d\d \(line \d+\)/);
});

test('identical messages from several ranks are explained once; a missing script is said so', async () => {
  const text = read('shared_gpu_processes.txt');
  const explanations = await explainText(`${text}\n${text}`, { roots: [repoRoot] });
  assert.equal(explanations.length, 1);
  assert.equal(explanations[0]!.frameFile, undefined);
  assert.match(renderMarkdown(explanations), /was not found on this machine/);
});

test('resolveFrameFile: absolute, relative to a root, and by trailing components of a foreign path', () => {
  const script = path.join(repoRoot, 'examples', 'train_gpt2.py');
  assert.equal(resolveFrameFile(script, []), script);
  assert.equal(resolveFrameFile('examples/train_gpt2.py', [repoRoot]), script);
  assert.equal(resolveFrameFile('C:\\Users\\x\\oomguard\\examples\\train_gpt2.py', [repoRoot]), script);
  assert.equal(resolveFrameFile('/nowhere/nothing_like_this.py', [repoRoot]), undefined);
});

test('Markdown escaping leaves code spans alone; links go through the editor\'s URI handler when its scheme is known', () => {
  assert.equal(md('failed in <module>() at a_b.py: `x <y>` & more'), 'failed in \\<module\\>() at a_b.py: `x <y>` &amp; more');
  assert.equal(fileLink('/work/my script.py', 12, 'vscode'), 'vscode://file/work/my%20script.py:12');
  assert.equal(fileLink('/work/train.py', 3), 'file:///work/train.py#L3');
});
