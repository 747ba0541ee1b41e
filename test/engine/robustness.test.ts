// Bad input never crashes the engine and never yields nonsense: binary junk, huge files, CRLF, tabs,
// syntax errors, and a rule that throws.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { RULES } from '../../server/src/rules';
import type { Rule } from '../../server/src/rules';
import { analyzeText, repoRoot } from '../helpers/analysis';

const LEAK = [
  'losses = []',
  'for x, y in loader:',
  '    optimizer.zero_grad()',
  '    loss = criterion(model(x), y)',
  '    loss.backward()',
  '    optimizer.step()',
  '    losses.append(loss)',
  '',
];

test('CRLF line endings give the same positions as LF', async () => {
  const lf = await analyzeText(LEAK.join('\n'));
  const crlf = await analyzeText(LEAK.join('\r\n'));
  assert.deepEqual(crlf.map((f) => f.range), lf.map((f) => f.range));
  assert.deepEqual(lf.map((f) => [f.code, f.range.start.line]), [['OOM101', 6]]);
});

test('tab indentation is analysed like spaces', async () => {
  const findings = await analyzeText(LEAK.join('\n').replace(/ {4}/g, '\t'));
  assert.deepEqual(findings.map((f) => [f.code, f.range.start.line, f.range.start.character]), [['OOM101', 6, 1]]);
});

test('binary junk and random bytes do not crash', async () => {
  let seed = 42;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  for (let round = 0; round < 20; round++) {
    const chars = Array.from({ length: 4000 }, () => String.fromCharCode(Math.floor(random() * 0x3000)));
    const findings = await analyzeText(chars.join(''));
    assert.ok(Array.isArray(findings));
  }
});

test('random slices of a real script (mid-edit states) do not crash', async () => {
  const text = fs.readFileSync(path.join(repoRoot, 'test', 'fixtures', 'rules', 'OOM101', 'appended.py'), 'utf8');
  for (let cut = 0; cut < text.length; cut += 97) {
    const findings = await analyzeText(text.slice(0, cut) + text.slice(cut + 13));
    assert.ok(Array.isArray(findings));
  }
});

test('a rule that throws is reported and the others still run', async () => {
  const failing: Rule = { code: 'OOM101', name: 'broken', defaultSeverity: 'warning', check: () => { throw new Error('boom'); } };
  const errors: string[] = [];
  const findings = await analyzeText('import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "0"\n', {
    rules: [failing, ...RULES.filter((rule) => rule.code !== 'OOM101')],
    onRuleError: (code, error) => errors.push(`${code}: ${(error as Error).message}`),
  });
  assert.deepEqual(errors, ['OOM101: boom']);
  assert.deepEqual(findings.map((f) => f.code), ['OOM105']);
});

test('the CLI skips binary files and a 10 MB file with a message, and checks the rest', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'oomguard-robust-'));
  fs.writeFileSync(path.join(dir, 'binary.py'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff, 0xfe, 0x00, 0x13]));
  fs.writeFileSync(path.join(dir, 'huge.py'), '# padding line for a very large file\n'.repeat(300_000));
  fs.writeFileSync(path.join(dir, 'train.py'), LEAK.join('\n'));
  const result = spawnSync(process.execPath, [path.join(repoRoot, 'dist', 'cli.js'), 'check', dir, '--output-format', 'json'], { encoding: 'utf8' });
  assert.equal(result.status, 1, result.stderr);
  assert.match(result.stderr, /binary\.py: not UTF-8 text; skipped\./);
  assert.match(result.stderr, /huge\.py: OOM Guard skipped this file/);
  const findings = JSON.parse(result.stdout) as Array<{ file: string; code: string; line: number }>;
  assert.deepEqual(findings.map((f) => [path.basename(f.file), f.code, f.line]), [['train.py', 'OOM101', 7]]);
});
