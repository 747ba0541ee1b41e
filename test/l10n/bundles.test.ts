// The translation bundles: every message the code passes to t() / vscode.l10n.t() is extracted, up to date in
// l10n/bundle.l10n.json, and translated in l10n/bundle.l10n.zh-cn.json with the same placeholders; the manifest's
// package.nls.zh-cn.json covers package.nls.json.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { bundleDir, extractMessages, placeholders, repoRoot } from '../../scripts/l10n';

function readJson(file: string): Record<string, string> {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, string>;
}

const extracted = extractMessages();
const english = readJson(path.join(bundleDir, 'bundle.l10n.json'));
const chinese = readJson(path.join(bundleDir, 'bundle.l10n.zh-cn.json'));

// Names that read the same in Chinese (the product, a GPU, a method) and a bare file:line position.
const SAME_IN_CHINESE = new Set(['OOM Guard', 'GPU', 'GPU {0}', 'the GPU', 'LoRA', 'at {0}:{1}']);

test('every localized message is a string literal', () => {
  assert.deepEqual(extracted.problems, []);
});

test('l10n/bundle.l10n.json is what the extraction writes (run node --import tsx scripts/l10n.ts --write)', () => {
  const keys = [...extracted.messages.keys()].sort();
  assert.deepEqual(Object.keys(english).sort(), keys);
  for (const [key, value] of Object.entries(english)) assert.equal(value, key);
});

test('the zh-CN bundle translates every message and has no stale keys', () => {
  const missing = Object.keys(english).filter((key) => !(key in chinese));
  const stale = Object.keys(chinese).filter((key) => !(key in english));
  assert.deepEqual(missing, [], 'messages without a zh-CN translation');
  assert.deepEqual(stale, [], 'zh-CN keys no code uses any more');
  const untranslated = Object.entries(chinese).filter(([key, value]) => !SAME_IN_CHINESE.has(key) && (value === key || !/[\u4e00-\u9fff]/.test(value)));
  assert.deepEqual(untranslated.map(([key]) => key), [], 'zh-CN values that are still English');
});

test('every zh-CN translation keeps the placeholders of its message', () => {
  const mismatched = Object.entries(chinese)
    .filter(([key, value]) => JSON.stringify([...new Set(placeholders(key))]) !== JSON.stringify([...new Set(placeholders(value))]))
    .map(([key, value]) => `${key} → ${value}`);
  assert.deepEqual(mismatched, []);
});

test('code in a message stays code in its translation', () => {
  // Calls such as torch.no_grad(), {0}.item(), optimizer.zero_grad(set_to_none=True) and launch lines are not translated.
  const code = /(?:[\w{}]+\.)*[\w{}]+\((?!s\))[^()\s]*\)|CUDA_VISIBLE_DEVICES=1 python train\.py|PYTORCH_CUDA_ALLOC_CONF=[\w:]+/g;
  let checked = 0;
  const lost = Object.entries(chinese).flatMap(([key, value]) =>
    [...key.matchAll(code)].map((m) => m[0]).filter((snippet) => (checked++, !value.includes(snippet))).map((snippet) => `${snippet} in ${JSON.stringify(value)}`));
  assert.deepEqual(lost, []);
  assert.ok(checked >= 20, `only ${checked} code snippets found in the messages: the pattern no longer matches them`);
});

test('package.nls.zh-cn.json has exactly the keys of package.nls.json, all translated', () => {
  const base = readJson(path.join(repoRoot, 'package.nls.json'));
  const zh = readJson(path.join(repoRoot, 'package.nls.zh-cn.json'));
  assert.deepEqual(Object.keys(zh).sort(), Object.keys(base).sort());
  for (const [key, value] of Object.entries(zh)) assert.match(value, /[\u4e00-\u9fff]/, `package.nls.zh-cn.json: ${key} is not translated`);
  // Every %key% of package.json resolves in both.
  const manifest = fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8');
  for (const [, key] of manifest.matchAll(/"%([^%"]+)%"/g)) {
    assert.ok(key! in base, `package.nls.json lacks ${key}`);
    assert.ok(key! in zh, `package.nls.zh-cn.json lacks ${key}`);
  }
});
