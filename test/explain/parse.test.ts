import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { findOomErrors, parseSize } from '../../server/src/explain/index';

const samples = path.join(__dirname, 'samples');
const read = (name: string) => fs.readFileSync(path.join(samples, name), 'utf8');
const MiB = 1024 ** 2;
const GiB = 1024 ** 3;

test('sizes: bytes, KiB/MiB/GiB and the old KB/MB/GB, all powers of 1024', () => {
  assert.deepEqual(parseSize('0 bytes'), { bytes: 0, text: '0 bytes' });
  assert.equal(parseSize('512 B')?.bytes, 512);
  assert.equal(parseSize('1.50 KiB')?.bytes, 1536);
  assert.equal(parseSize('786.00 MiB')?.bytes, 786 * MiB);
  assert.equal(parseSize('1.25 GiB')?.bytes, 1.25 * GiB);
  assert.equal(parseSize('291.44 MB')?.bytes, Math.round(291.44 * MiB));
  assert.equal(parseSize('3.95 GB')?.bytes, Math.round(3.95 * GiB));
  assert.equal(parseSize('lots'), undefined);
});

test('current wording: every figure, the exception and the user frame (Python 3.11 markers skipped)', () => {
  const [report, ...rest] = findOomErrors(read('current_gpt2.log'));
  assert.equal(rest.length, 0);
  const m = report!.message;
  assert.equal(m.format, 'current');
  assert.equal(m.exception, 'torch.OutOfMemoryError');
  assert.equal(m.gpu, 0);
  assert.equal(m.requested?.bytes, 786 * MiB);
  assert.equal(m.totalCapacity?.text, '23.53 GiB');
  assert.equal(m.free?.text, '412.69 MiB');
  assert.deepEqual(m.processes.map((p) => [p.pid, p.used.text]), [[null, '23.11 GiB']]);
  assert.equal(m.allocated?.text, '21.85 GiB');
  assert.equal(m.reservedUnallocated?.text, '807.56 MiB');
  assert.equal(m.hint, 'expandable_segments');
  assert.equal(m.line, 11);
  assert.equal(report!.frames.length, 3);
  assert.deepEqual(report!.userFrame, { file: '/home/ada/runs/oomguard/examples/train_gpt2.py', line: 62, function: '<module>', code: 'loss = outputs.loss' });
});

test('current wording with other processes, a memory fraction and CUDA Graph private pools', () => {
  const m = findOomErrors(read('shared_gpu_processes.txt'))[0]!.message;
  assert.equal(m.format, 'current');
  assert.equal(m.gpu, 1);
  assert.deepEqual(m.processes.map((p) => [p.pid, p.used.text]), [[2752205, '61.82 GiB'], [2752399, '8.00 GiB'], [null, '21.99 GiB']]);
  assert.equal(m.allowed?.text, '40.00 GiB');
  assert.equal(m.privatePools?.text, '512.00 MiB');
  assert.equal(m.reservedUnallocated?.text, '120.54 MiB');
});

test('PyTorch 2.1 wording ("capacty") under torchrun: [rankN]: prefixes, one report per rank', () => {
  const reports = findOomErrors(read('torchrun_2.1.log'));
  assert.equal(reports.length, 2);
  const [rank0, rank1] = reports.map((r) => r!);
  assert.equal(rank0!.message.format, 'pytorch-2.1');
  assert.equal(rank0!.message.exception, 'torch.cuda.OutOfMemoryError');
  assert.equal(rank0!.message.hint, 'max_split_size_mb');
  assert.equal(rank0!.message.free?.text, '103.50 MiB');
  assert.equal(rank1!.message.gpu, 1);
  assert.deepEqual(rank0!.userFrame, { file: '/mnt/cluster/jobs/vit/train_vit.py', line: 118, function: 'main', code: 'loss.backward()' });
  // Each rank's traceback is its own: rank 1's has no library frames.
  assert.equal(rank0!.frames.length, 4);
  assert.equal(rank1!.frames.length, 2);
});

test('PyTorch 2.0 and older wording, with Windows paths', () => {
  const report = findOomErrors(read('legacy_1.13.txt'))[0]!;
  const m = report.message;
  assert.equal(m.format, 'legacy');
  assert.equal(m.exception, 'torch.cuda.OutOfMemoryError');
  assert.equal(m.requested?.text, '36.00 MiB');
  assert.equal(m.totalCapacity?.text, '7.93 GiB');
  assert.equal(m.allocated?.text, '130.35 MiB');
  assert.equal(m.free?.text, '47.06 MiB');
  assert.equal(m.reservedTotal?.text, '188.00 MiB');
  assert.equal(m.hint, 'max_split_size_mb');
  assert.equal(report.userFrame?.file, 'C:\\Users\\lin\\projects\\seg\\unet.py');
  assert.equal(report.userFrame?.line, 52);
});

test('before 1.4, "cached" is reserved but unallocated', () => {
  const m = findOomErrors(read('legacy_1.2_cached.txt'))[0]!.message;
  assert.equal(m.format, 'legacy');
  assert.equal(m.exception, 'RuntimeError');
  assert.equal(m.reservedTotal, undefined);
  assert.equal(m.reservedUnallocated?.text, '4.68 MiB');
});

test('old MB/GB units and a message wrapped over lines with a continuation backslash', () => {
  const mb = findOomErrors(read('mb_style.txt'))[0]!.message;
  assert.equal(mb.requested?.bytes, 512 * MiB);
  assert.equal(mb.reservedTotal?.bytes, Math.round(2.96 * GiB));
  const wrapped = findOomErrors(read('wrapped_larger_than_gpu.txt'))[0]!.message;
  assert.equal(wrapped.format, 'current');
  assert.equal(wrapped.exception, undefined);
  assert.equal(wrapped.totalCapacity?.text, '23.69 GiB');
  assert.deepEqual(wrapped.processes.map((p) => p.pid), [2006998, null]);
  assert.equal(wrapped.reservedUnallocated?.text, '3.19 MiB');
});

test('a truncated message keeps what it has; text without an OOM error gives nothing', () => {
  const [partial] = findOomErrors('torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB');
  assert.equal(partial!.message.format, 'partial');
  assert.equal(partial!.message.requested?.text, '20.00 MiB');
  assert.equal(partial!.message.totalCapacity, undefined);
  assert.deepEqual(findOomErrors('RuntimeError: shape mismatch\nloss 0.3\n'), []);
  assert.deepEqual(findOomErrors(''), []);
});
