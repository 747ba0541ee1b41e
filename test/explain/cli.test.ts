import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runExplain } from '../../server/src/cli/explain';
import { main } from '../../server/src/cli/main';

const samples = path.join(__dirname, 'samples');

async function run(args: string[], stdin = ''): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runExplain(args, { stdout: (s) => { stdout += s; }, stderr: (s) => { stderr += s; } }, async () => stdin);
  return { code, stdout, stderr };
}

test('oomguard explain FILE prints the explanation in plain words', async () => {
  const { code, stdout, stderr } = await run([path.join(samples, 'legacy_1.13.txt')]);
  assert.equal(code, 0, stderr);
  assert.match(stdout, /PyTorch asked for 36\.00 MiB more on GPU 0, which has 7\.93 GiB in total/);
  assert.match(stdout, /Where the memory went, largest first:/);
  assert.match(stdout, /max_split_size_mb/);
});

test('oomguard explain - reads standard input; --json prints the explanations', async () => {
  const text = fs.readFileSync(path.join(samples, 'torchrun_2.1.log'), 'utf8');
  const { code, stdout } = await run(['-', '--json'], text);
  assert.equal(code, 0);
  const json = JSON.parse(stdout) as Array<{ message: { format: string; gpu: number }; causes: Array<{ kind: string }> }>;
  assert.deepEqual(json.map((e) => [e.message.format, e.message.gpu]), [['pytorch-2.1', 0], ['pytorch-2.1', 1]]);
  assert.equal(json[0]!.causes[0]!.kind, 'fragmentation');
});

test('--script names the script when the log\'s path is not on this machine', async () => {
  const script = path.resolve(__dirname, '..', '..', 'examples', 'train_gpt2.py');
  const { code, stdout } = await run([path.join(samples, 'torchrun_2.1.log'), '--script', script, '--markdown']);
  assert.equal(code, 0);
  assert.match(stdout, /## The script: .*train_gpt2\.py/);
});

test('exit 1 when the text holds no OOM error, 2 on usage and I/O errors; the dispatcher knows explain', async () => {
  assert.equal((await run(['-'], 'all good\n')).code, 1);
  const missing = await run([path.join(samples, 'no-such.log')]);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /cannot read/);
  assert.equal((await run(['a.log', 'b.log'])).code, 2);
  assert.equal((await run(['--bogus'])).code, 2);
  assert.equal((await run(['-', '--script', path.join(samples, 'nope.py')], 'x')).code, 2);
  let out = '';
  assert.equal(await main(['explain', '--help'], { stdout: (s) => { out += s; }, stderr: () => undefined }), 0);
  assert.match(out, /usage: oomguard explain/);
});
