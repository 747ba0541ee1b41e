// Golden fixtures per rule: each test/fixtures/rules/<CODE>/*.py must produce exactly the findings its
// `# expect:` labels name, and the same output as the .expected.txt beside it
// (regenerate with `npm run fixtures:update` after checking the difference by eye).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { RULES } from '../../server/src/rules';
import { analyzeText, findingLines, formatSnapshot, listFiles, readLabels, repoRoot } from '../helpers/analysis';

const fixturesDir = path.join(repoRoot, 'test', 'fixtures', 'rules');
const update = process.env.UPDATE_FIXTURES === '1';

for (const file of listFiles(fixturesDir, '.py').filter((f) => !f.endsWith('.in.py') && !f.endsWith('.out.py'))) {
  const name = path.relative(fixturesDir, file);
  test(`rule fixture ${name}`, async () => {
    const text = fs.readFileSync(file, 'utf8');
    const findings = await analyzeText(text);
    const key = (l: { line: number; code: string }) => `${l.line}:${l.code}`;
    assert.deepEqual(findingLines(findings).map(key).sort(), readLabels(text).map(key).sort(), 'findings differ from the # expect: labels');
    const snapshotFile = file.replace(/\.py$/, '.expected.txt');
    const snapshot = formatSnapshot(findings);
    if (update || !fs.existsSync(snapshotFile)) fs.writeFileSync(snapshotFile, snapshot);
    assert.equal(snapshot, fs.readFileSync(snapshotFile, 'utf8'));
  });
}

test('every rule has a fixture folder with firing and OK parts', async () => {
  for (const rule of RULES) {
    const dir = path.join(fixturesDir, rule.code);
    if (!fs.existsSync(dir)) assert.fail(`no fixtures for ${rule.code}`);
    // Notebook fixtures (.ipynb, test/rules/notebooks.test.ts) count too: their labels sit in the cells' source lines.
    const texts = [...listFiles(dir, '.py'), ...listFiles(dir, '.ipynb')].map((f) => fs.readFileSync(f, 'utf8'));
    assert.ok(texts.some((text) => readLabels(text).some((label) => label.code === rule.code)), `${rule.code}: no firing case`);
    assert.ok(texts.some((text) => text.includes('# OK')), `${rule.code}: no # OK part`);
  }
});
