import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { RULE_CODES } from '../../server/src/rules/codes';
import { RULES } from '../../server/src/rules';
import { UNUSED_NOQA } from '../../server/src/engine/suppression';
import { repoRoot } from '../helpers/analysis';

test('rule codes and names are unique and follow the rule table in docs/rules/README.md (both languages)', () => {
  assert.equal(new Set(RULE_CODES.map((r) => r.code)).size, RULE_CODES.length);
  assert.equal(new Set(RULE_CODES.map((r) => r.name)).size, RULE_CODES.length);
  for (const language of [['docs', 'rules'], ['docs', 'zh-CN', 'rules']]) {
    const index = fs.readFileSync(path.join(repoRoot, ...language, 'README.md'), 'utf8');
    const rows = [...index.matchAll(/^\| \[(OOM\d{3})\]\(\1\.md\) \| ([a-z-]+) \| (\w+) \|/gm)].map((m) => `${m[1]} ${m[2]} ${m[3]}`);
    const expected = [UNUSED_NOQA, ...RULE_CODES].map((rule) => `${rule.code} ${rule.name} ${rule.defaultSeverity}`);
    assert.deepEqual(rows, expected, language.join('/'));
  }
});

test('every registered rule has a doc page with the expected sections', () => {
  assert.equal(new Set(RULES.map((r) => r.code)).size, RULES.length);
  for (const rule of RULES) {
    const doc = fs.readFileSync(path.join(repoRoot, 'docs', 'rules', `${rule.code}.md`), 'utf8');
    for (const heading of ['## What it does', '## Why is this bad?', '## Example', '## Use instead', '## Fix safety']) {
      assert.ok(doc.includes(heading), `${rule.code}.md lacks "${heading}"`);
    }
    assert.ok(doc.includes(rule.name), `${rule.code}.md does not name the rule`);
  }
});
