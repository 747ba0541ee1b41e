// One line table for every line ending. Python ends a line at `\n`, `\r\n` or a lone `\r`, and so does LSP; a
// finding and its fix must name the same line whichever the file uses, or a "safe" fix deletes the wrong line.
// Over every rule fixture and corpus script: findings on a file with lone `\r` endings, or with all three mixed,
// sit exactly where they sit in the `\n` version, and each fix, applied there, does what it does in the `\n` version.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { applyEdits } from '../../server/src/fixes/apply';
import { parsePython } from '../../server/src/engine/parser';
import { analyzeText, listFiles, repoRoot } from '../helpers/analysis';

const normalise = (text: string) => text.replace(/\r\n|\r/g, '\n');

/** Line i of the file ends with `\r`, `\n` or `\r\n` in turn (a lone `\r` never before an empty `\n` line, which would read as one CRLF). */
function mixedEndings(text: string): string {
  const endings = ['\r', '\n', '\r\n'];
  const lines = text.split('\n');
  return lines.map((line, i) => {
    if (i === lines.length - 1) return line;
    const ending = endings[i % 3]!;
    return line + (ending === '\r' && lines[i + 1] === '' ? '\r\n' : ending);
  }).join('');
}

const sources = [...listFiles(path.join(repoRoot, 'test', 'fixtures', 'rules'), '.py'), ...listFiles(path.join(repoRoot, 'test', 'corpus'), '.py')]
  .filter((file) => !file.includes('syntax_error'));

for (const [name, convert] of [['lone \\r', (text: string) => text.replace(/\n/g, '\r')], ['mixed', mixedEndings]] as const) {
  test(`findings and fixes with ${name} line endings match the \\n version`, async () => {
    let fixesCompared = 0;
    for (const file of sources) {
      const lf = normalise(fs.readFileSync(file, 'utf8'));
      const other = convert(lf);
      const expected = await analyzeText(lf);
      const actual = await analyzeText(other);
      const where = (f: (typeof expected)[number]) => `${f.code} ${f.range.start.line}:${f.range.start.character}-${f.range.end.line}:${f.range.end.character}`;
      assert.deepEqual(actual.map(where), expected.map(where), path.relative(repoRoot, file));
      for (const [i, finding] of actual.entries()) {
        for (const [j, fix] of finding.fixes.entries()) {
          const fixedOther = applyEdits(other, fix.edits);
          const fixedLf = applyEdits(lf, expected[i]!.fixes[j]!.edits);
          assert.equal(normalise(fixedOther), fixedLf, `${path.relative(repoRoot, file)}: ${finding.code} fix "${fix.title}"`);
          const tree = await parsePython(fixedOther);
          const before = await parsePython(other);
          assert.ok(!tree!.rootNode.hasError || before!.rootNode.hasError, `${path.relative(repoRoot, file)}: the fix broke the parse`);
          tree!.delete();
          before!.delete();
          fixesCompared++;
        }
      }
    }
    assert.ok(fixesCompared > 50, `only ${fixesCompared} fixes compared`);
  });
}
