// The zh-CN rule docs mirror docs/rules/: one page per rule, the same sections in the same order (headings
// translated the same way on every page), the same code blocks, and the same figures as the English page.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { repoRoot } from '../../scripts/l10n';

const englishDir = path.join(repoRoot, 'docs', 'rules');
const chineseDir = path.join(repoRoot, 'docs', 'zh-CN', 'rules');
// The rule pages; README.md (the rule index) is checked against the code table in test/rules/codes.test.ts.
const pages = fs.readdirSync(englishDir).filter((name) => /^OOM\d{3}\.md$/.test(name)).sort();

// One translation per section heading, used on every page.
const HEADINGS: Record<string, string> = {
  '## What it does': '## 检查什么',
  '## Why is this bad?': '## 为什么有问题？',
  '## Example': '## 示例',
  '## Use instead': '## 推荐写法',
  '## Fix safety': '## 修复的安全性',
};

function read(dir: string, name: string): string {
  return fs.readFileSync(path.join(dir, name), 'utf8');
}

function headings(text: string): string[] {
  return outsideCode(text).split('\n').filter((line) => line.startsWith('#'));
}

function outsideCode(text: string): string {
  return text.replace(/```[\s\S]*?```/g, '');
}

/** The code lines of every fenced block, comments dropped (they may be translated). */
function codeBlocks(text: string): string[] {
  return [...text.matchAll(/```\w*\n([\s\S]*?)```/g)].map((m) => m[1]!.split('\n').map((line) => line.replace(/\s*#(?!\s*torchrun).*$/, '').trimEnd()).join('\n'));
}

/** Every number written in the page (measured and computed figures, sizes, codes), in order of size. */
function figures(text: string): string[] {
  return [...text.matchAll(/\d[\d,]*(?:\.\d+)?/g)].map((m) => m[0].replace(/,/g, '')).sort();
}

test('every rule page has a zh-CN page and nothing else is there', () => {
  assert.ok(pages.length >= 10);
  assert.deepEqual(fs.readdirSync(chineseDir).filter((name) => name.endsWith('.md')).sort(), [...pages, 'README.md'].sort());
});

for (const page of pages) {
  test(`docs/zh-CN/rules/${page} mirrors docs/rules/${page}`, () => {
    const en = read(englishDir, page);
    const zh = read(chineseDir, page);
    const [title, ...sections] = headings(en);
    assert.deepEqual(headings(zh), [title, ...sections.map((heading) => HEADINGS[heading] ?? `(untranslated) ${heading}`)]);
    assert.deepEqual(codeBlocks(zh), codeBlocks(en), 'code blocks differ');
    assert.deepEqual(figures(zh), figures(en), 'figures differ');
    assert.match(outsideCode(zh), /[\u4e00-\u9fff]/);
  });
}

test('README.zh-CN.md links every zh-CN rule page, and README.md links README.zh-CN.md', () => {
  const readme = fs.readFileSync(path.join(repoRoot, 'README.zh-CN.md'), 'utf8');
  for (const page of pages) assert.ok(readme.includes(`(docs/zh-CN/rules/${page})`), `README.zh-CN.md does not link ${page}`);
  assert.ok(fs.readFileSync(path.join(repoRoot, 'README.md'), 'utf8').includes('(README.zh-CN.md)'));
});
