// Golden tests over Jupyter notebooks, through the command line's own path (cli/check.ts checkFile): every
// test/fixtures/**/*.ipynb (except --fix inputs and outputs) must produce exactly the findings its `# expect:`
// labels name, in the cell and cell line that hold the label, and the same findings, cell positions and fix edits
// as the .expected.txt beside it (regenerate with `npm run fixtures:update`, then check the difference by eye).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { checkFile } from '../../server/src/cli/check';
import { findingToJson } from '../../server/src/cli/output';
import type { FileFindings } from '../../server/src/cli/check';
import { listFiles, repoRoot } from '../helpers/analysis';

const fixturesDir = path.join(repoRoot, 'test', 'fixtures');
const update = process.env.UPDATE_FIXTURES === '1';

export async function checkNotebook(file: string): Promise<FileFindings> {
  let errors = '';
  const result = await checkFile(file, path.basename(file), {}, { stdout: () => undefined, stderr: (s) => (errors += s) });
  assert.ok(result?.notebook, `${file} was not checked as a notebook: ${errors}`);
  return result;
}

/** `# expect: CODE` labels of the code cells, as `cell:line:CODE` (1-based, every cell counted). */
function notebookLabels(result: FileFindings): string[] {
  const labels: string[] = [];
  result.notebook!.file.cells.forEach((cell, index) => {
    if (cell.kind !== 'code') return;
    cell.text.split(/\r\n|\r|\n/).forEach((line, row) => {
      const match = /#\s*expect:\s*((?:OOM\d{3}\s*,?\s*)+)/.exec(line);
      for (const code of match?.[1]!.split(',').map((c) => c.trim()).filter(Boolean) ?? []) labels.push(`${index + 1}:${row + 1}:${code}`);
    });
  });
  return labels.sort();
}

function snapshot(result: FileFindings): string {
  return result.findings
    .map((finding) => {
      const json = findingToJson(result.file, finding, result.notebook);
      const edits = json.fix?.edits.map((e) => `cell ${e.cell} ${e.line}:${e.column}-${e.endLine}:${e.endColumn} ${JSON.stringify(e.newText)}`).join('; ');
      return `cell ${json.cell} ${json.line}:${json.column}-${json.endLine}:${json.endColumn} ${json.code} ${json.name} [${json.severity}] ${json.message}` +
        finding.fixes.map((fix) => `\n    fix${fix.safe ? '' : ' (unsafe)'}: ${fix.title}`).join('') +
        (json.fix ? `\n    edits of "${json.fix.title}": ${edits}` : '');
    })
    .join('\n') + '\n';
}

const notebooks = listFiles(fixturesDir, '.ipynb').filter((file) => !/\.(in|out)\.ipynb$/.test(file));

test('there are notebook fixtures with markdown cells, magics, outputs, CRLF sources and both source forms', () => {
  const texts = notebooks.map((file) => fs.readFileSync(file, 'utf8'));
  assert.ok(notebooks.length >= 3);
  assert.ok(texts.some((text) => text.includes('"cell_type": "markdown"')));
  assert.ok(texts.some((text) => /"%%\w+/.test(text) && /"!\w/.test(text) && /"%\w/.test(text)));
  assert.ok(texts.some((text) => text.includes('"output_type": "execute_result"')));
  assert.ok(texts.some((text) => text.includes('\\r\\n')));
  assert.ok(texts.some((text) => /"source": "/.test(text)) && texts.some((text) => /"source": \[/.test(text)));
});

for (const file of notebooks) {
  const name = path.relative(fixturesDir, file);
  test(`notebook fixture ${name}`, async () => {
    const result = await checkNotebook(file);
    const found = result.findings.map((finding) => {
      const json = findingToJson(result.file, finding, result.notebook);
      return `${json.cell}:${json.line}:${json.code}`;
    });
    assert.deepEqual(found.sort(), notebookLabels(result), 'findings differ from the # expect: labels (cell:line:code)');
    const snapshotFile = file.replace(/\.ipynb$/, '.expected.txt');
    const text = snapshot(result);
    if (update || !fs.existsSync(snapshotFile)) fs.writeFileSync(snapshotFile, text);
    assert.equal(text, fs.readFileSync(snapshotFile, 'utf8'));
  });
}
