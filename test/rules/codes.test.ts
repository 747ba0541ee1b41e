import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { RULE_CODES } from '../../server/src/rules/codes';
import { RULES } from '../../server/src/rules';
import { repoRoot } from '../helpers/analysis';

test('rule codes and names are unique and follow the spec table', () => {
  assert.equal(new Set(RULE_CODES.map((r) => r.code)).size, RULE_CODES.length);
  assert.equal(new Set(RULE_CODES.map((r) => r.name)).size, RULE_CODES.length);
  const spec = fs.readFileSync(path.join(repoRoot, '..', 'shared', 'spec', 'rules.md'), 'utf8');
  for (const rule of RULE_CODES) {
    assert.match(spec, new RegExp(`\\| ${rule.code} \\| ${rule.name} \\| ${rule.defaultSeverity} \\|`), `${rule.code} differs from the spec`);
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
