// Every fix produces code that parses and that CPython compiles: over all rule fixtures, the corpus and their
// CRLF and tab variants, each fix applied alone. Before/after pairs in test/fixtures/fixes show the preferred
// fixes applied together (regenerate with `npm run fixtures:update`).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { applyEdits, applyFixes } from '../../server/src/fixes/apply';
import { parsePython } from '../../server/src/engine/parser';
import { analyzeText, listFiles, repoRoot } from '../helpers/analysis';
import { compileAll, requirePython3 } from '../helpers/python';

const update = process.env.UPDATE_FIXTURES === '1';


function variants(text: string): Array<[string, string]> {
  return [
    ['lf', text],
    ['crlf', text.replace(/\r?\n/g, '\r\n')],
    ['tabs', text.replace(/^((?: {4})+)/gm, (spaces) => '\t'.repeat(spaces.length / 4))],
  ];
}

test('no fix ever produces a file that fails to parse or compile', async (t) => {
  if (!requirePython3(t)) return;
  const sources = [...listFiles(path.join(repoRoot, 'test', 'fixtures', 'rules'), '.py'), ...listFiles(path.join(repoRoot, 'test', 'corpus'), '.py')]
    .filter((file) => !file.includes('syntax_error'));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'oomguard-fixes-'));
  const written: string[] = [];
  let fixesTried = 0;
  for (const file of sources) {
    for (const [variant, text] of variants(fs.readFileSync(file, 'utf8'))) {
      const findings = await analyzeText(text);
      for (const [i, finding] of findings.entries()) {
        for (const [j, fix] of finding.fixes.entries()) {
          const fixed = applyEdits(text, fix.edits);
          fixesTried++;
          const tree = await parsePython(fixed);
          const before = await parsePython(text);
          assert.ok(!tree!.rootNode.hasError || before!.rootNode.hasError, `${path.basename(file)} (${variant}): "${fix.title}" broke the syntax`);
          tree!.delete();
          before!.delete();
          const out = path.join(dir, `${path.basename(file, '.py')}_${variant}_${i}_${j}.py`);
          fs.writeFileSync(out, fixed);
          written.push(out);
        }
      }
    }
  }
  assert.ok(fixesTried > 100, `only ${fixesTried} fixes were tried`);
  assert.deepEqual(compileAll(written), []);
  fs.rmSync(dir, { recursive: true, force: true });
});

for (const input of listFiles(path.join(repoRoot, 'test', 'fixtures', 'fixes'), '.in.py')) {
  test(`before/after ${path.basename(input)}`, async (t) => {
    const text = fs.readFileSync(input, 'utf8');
    const findings = await analyzeText(text);
    const preferred = findings.map((f) => f.fixes.find((fix) => fix.preferred) ?? f.fixes[0]).filter((fix) => !!fix);
    const { text: fixed } = applyFixes(text, preferred);
    const expectedFile = input.replace(/\.in\.py$/, '.out.py');
    if (update || !fs.existsSync(expectedFile)) fs.writeFileSync(expectedFile, fixed);
    assert.equal(fixed, fs.readFileSync(expectedFile, 'utf8'));
    // The fixed file has none of the findings the preferred fixes address.
    const after = await analyzeText(fixed);
    assert.deepEqual(after.filter((f) => f.fixes.length > 0).map((f) => `${f.code}@${f.range.start.line + 1}`), []);
    if (requirePython3(t)) assert.deepEqual(compileAll([expectedFile]), []);
  });
}
