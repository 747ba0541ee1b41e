// `oomguard check` and `oomguard estimate` on Jupyter notebooks (cli.md, "oomguard check on notebooks"): cell
// locations in text and JSON, --fix that rewrites only the changed cells' sources, --diff per cell, notebooks that
// are not nbformat 4 skipped with one message (and a run that skipped a file never passes).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { main } from '../../server/src/cli/main';
import { collectPythonFiles } from '../../server/src/cli/files';
import { parseJson, replaceCellSources, parseNotebook } from '../../server/src/cli/ipynb';
import { repoRoot } from '../helpers/analysis';

const fixtures = path.join(repoRoot, 'test', 'fixtures', 'notebooks');
const FIX_IN = fs.readFileSync(path.join(fixtures, 'fix.in.ipynb'), 'utf8');
const FIX_OUT = fs.readFileSync(path.join(fixtures, 'fix.out.ipynb'), 'utf8');

function project(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'oomguard-nb-'));
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

async function run(cwd: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const previous = process.cwd();
  process.chdir(cwd);
  try {
    const code = await main(args, { stdout: (s) => (stdout += s), stderr: (s) => (stderr += s) });
    return { code, stdout, stderr };
  } finally {
    process.chdir(previous);
  }
}

test('text output names the cell like ruff: nb.ipynb:cell N:line:column', async () => {
  const dir = project({ 'nb.ipynb': FIX_IN });
  const { code, stdout } = await run(dir, 'check');
  assert.equal(code, 1);
  const locations = stdout.trim().split('\n').map((line) => line.split(': ')[0]);
  assert.deepEqual(locations, [
    'nb.ipynb:cell 3:6:5', 'nb.ipynb:cell 3:7:5', 'nb.ipynb:cell 4:2:1', 'nb.ipynb:cell 5:1:8', 'nb.ipynb:cell 7:1:1', 'Found 5 finding(s).',
  ]);
  assert.match(stdout, /^nb\.ipynb:cell 4:2:1: OOM118 The cell ends with 'logits'/m);
});

test('JSON adds "cell" (1-based, every cell counted) with lines and columns within the cell, fix edits included', async () => {
  const dir = project({ 'nb.ipynb': FIX_IN });
  const { stdout } = await run(dir, 'check', '--output-format', 'json', '--select', 'OOM118,OOM106');
  const findings = JSON.parse(stdout) as Array<Record<string, unknown>>;
  assert.deepEqual(findings.map((f) => [f.cell, f.code, f.line, f.column, f.endLine, f.endColumn]), [
    [3, 'OOM106', 7, 5, 7, 29],
    [4, 'OOM118', 2, 1, 2, 7],
    [7, 'OOM118', 1, 1, 1, 19],
  ]);
  assert.deepEqual(findings[1]!.fix, {
    safe: true,
    title: "End the line with ';' so that IPython does not keep the result",
    edits: [{ cell: 4, line: 2, column: 7, endLine: 2, endColumn: 7, newText: ';' }],
  });
  // The deleted line of OOM106 ends at the end of its cell's line, not in the next cell.
  assert.deepEqual((findings[0]!.fix as { edits: unknown[] }).edits, [{ cell: 3, line: 7, column: 1, endLine: 8, endColumn: 1, newText: '' }]);
});

test('--fix rewrites only the changed cells\' sources: outputs, metadata, formatting and the final newline stay', async () => {
  const dir = project({ 'nb.ipynb': FIX_IN });
  const fixed = await run(dir, 'check', '--fix');
  assert.equal(fixed.code, 0, fixed.stdout + fixed.stderr);
  assert.match(fixed.stdout, /Fixed 5 finding\(s\); 0 left/);
  assert.equal(fs.readFileSync(path.join(dir, 'nb.ipynb'), 'utf8'), FIX_OUT);
  // A second run finds nothing and writes nothing.
  const again = await run(dir, 'check', '--fix');
  assert.equal(again.code, 0);
  assert.equal(fs.readFileSync(path.join(dir, 'nb.ipynb'), 'utf8'), FIX_OUT);
});

test('--fix keeps a notebook\'s own layout: two-space indent, CRLF line breaks, one-line source lists, no final newline', async () => {
  const before = FIX_IN.replace(/\n( +)/g, (_, spaces: string) => `\n${spaces}${spaces}`).replace(/\n/g, '\r\n').replace(/\r\n$/, '')
    // One cell's list written on one line, as some tools write short lists.
    .replace('[\r\n        "logits.softmax(-1)"\r\n      ]', '["logits.softmax(-1)"]');
  assert.ok(before.includes('["logits.softmax(-1)"]'));
  const dir = project({ 'nb.ipynb': before });
  assert.equal((await run(dir, 'check', '--fix')).code, 0);
  const after = fs.readFileSync(path.join(dir, 'nb.ipynb'), 'utf8');
  assert.ok(after.includes('["logits.softmax(-1);"]'));
  assert.ok(after.includes('        "    losses.append(loss.detach())\\n",\r\n        "print(\\"done\\")"\r\n      ]'));
  assert.ok(!after.endsWith('\n'));
  // Nothing but the sources of the fixed cells changed.
  const parsedBefore = JSON.parse(before) as { cells: Array<{ source: unknown }> };
  const parsedAfter = JSON.parse(after) as { cells: Array<{ source: unknown }> };
  const changed = parsedBefore.cells.map((cell, i) => JSON.stringify(cell.source) !== JSON.stringify(parsedAfter.cells[i]!.source));
  assert.deepEqual(changed, [false, false, true, true, true, false, true]);
  for (const cell of [...parsedBefore.cells, ...parsedAfter.cells]) delete (cell as { source?: unknown }).source;
  assert.deepEqual(parsedAfter, parsedBefore);
});

test('a source list that was empty gets the file\'s indentation; unchanged lines keep their escapes', () => {
  const file = '{\n "cells": [\n  {\n   "cell_type": "code",\n   "source": []\n  },\n  {\n   "cell_type": "code",\n   "source": ["caf\\u00e9 = 1\\n", "x"]\n  }\n ],\n "nbformat": 4\n}\n';
  const parsed = parseNotebook(file);
  assert.ok('notebook' in parsed);
  const out = replaceCellSources(parsed.notebook, new Map([[0, 'a\nb'], [1, 'café = 1\ny']]));
  assert.equal(out, '{\n "cells": [\n  {\n   "cell_type": "code",\n   "source": [\n    "a\\n",\n    "b"\n   ]\n  },\n  {\n   "cell_type": "code",\n   "source": ["caf\\u00e9 = 1\\n", "y"]\n  }\n ],\n "nbformat": 4\n}\n');
  assert.deepEqual(parseJson(out).kind, 'object');
});

test('--diff prints one unified diff per changed cell and writes nothing', async () => {
  const dir = project({ 'nb.ipynb': FIX_IN });
  const { code, stdout } = await run(dir, 'check', '--diff');
  assert.equal(code, 1);
  assert.equal(fs.readFileSync(path.join(dir, 'nb.ipynb'), 'utf8'), FIX_IN);
  assert.deepEqual([...stdout.matchAll(/^--- (.*)$/gm)].map((m) => m[1]), ['nb.ipynb:cell 3', 'nb.ipynb:cell 4', 'nb.ipynb:cell 5', 'nb.ipynb:cell 7']);
  assert.match(stdout, /-logits\n\\ No newline at end of file\n\+logits;\n/);
});

test('a notebook that is not JSON or not nbformat 4 gets one message and is skipped; the run never says "All checks passed"', async () => {
  const dir = project({
    'broken.ipynb': '{\n "cells": [\n',
    'old.ipynb': JSON.stringify({ nbformat: 3, worksheets: [] }),
    'clean.py': 'print("hello")\n',
  });
  const text = await run(dir, 'check');
  assert.equal(text.code, 1);
  assert.match(text.stderr, /^broken\.ipynb: not valid JSON \(line 3, column 1: unexpected end of the file\); skipped\.$/m);
  assert.match(text.stderr, /^old\.ipynb: nbformat 3 notebook; only nbformat 4 is supported; skipped\.$/m);
  assert.equal(text.stderr.trim().split('\n').length, 2);
  assert.doesNotMatch(text.stdout, /All checks passed/);
  assert.match(text.stdout, /2 file\(s\) skipped: broken\.ipynb, old\.ipynb\./);
  // Every format and mode keeps the status; --exit-zero still lets the step pass.
  assert.equal((await run(dir, 'check', '--output-format', 'json')).code, 1);
  assert.equal((await run(dir, 'check', '--statistics')).stdout.includes('All checks passed'), false);
  assert.equal((await run(dir, 'check', '--fix')).code, 1);
  assert.equal((await run(dir, 'check', '--exit-zero')).code, 0);
  // The clean file alone passes.
  assert.match((await run(dir, 'check', 'clean.py')).stdout, /All checks passed/);
});

test('directories: notebooks are found, Jupyter checkpoint copies are not; a notebook of another language has no Python to check', async () => {
  const r = JSON.stringify({ nbformat: 4, nbformat_minor: 5, metadata: { kernelspec: { language: 'R', name: 'ir' }, language_info: { name: 'R' } }, cells: [{ cell_type: 'code', metadata: {}, outputs: [], execution_count: null, source: 'x <- c(1, 2)\nx' }] });
  const dir = project({ 'a/nb.ipynb': FIX_IN, 'a/.ipynb_checkpoints/nb-checkpoint.ipynb': FIX_IN, 'r.ipynb': r });
  fs.mkdirSync(path.join(dir, '.git'));
  const { files } = collectPythonFiles([dir]);
  assert.deepEqual(files.map((file) => path.relative(dir, file).split(path.sep).join('/')), ['a/nb.ipynb', 'r.ipynb']);
  const { stdout } = await run(dir, 'check', 'r.ipynb');
  assert.match(stdout, /All checks passed/);
});

test('SARIF and GitHub annotations point at the line of the notebook file that holds the cell\'s line', async () => {
  const dir = project({ 'nb.ipynb': FIX_IN });
  const sarif = JSON.parse((await run(dir, 'check', '--output-format', 'sarif', '--select', 'OOM118')).stdout) as {
    runs: Array<{ results: Array<{ message: { text: string }; locations: Array<{ physicalLocation: { region: { startLine: number } } }> }> }>;
  };
  const [first] = sarif.runs[0]!.results;
  const fileLines = FIX_IN.split('\n');
  const line = first!.locations[0]!.physicalLocation.region.startLine;
  assert.equal(fileLines[line - 1]!.trim(), '"logits"');
  assert.match(first!.message.text, /^cell 4:2:1: The cell ends with 'logits'/);
  const github = (await run(dir, 'check', '--output-format', 'github', '--select', 'OOM118')).stdout.split('\n')[0]!;
  assert.match(github, new RegExp(`^::notice file=nb\\.ipynb,line=${line},title=OOM118 \\(cell 4%3A2%3A1\\)::The cell ends`));
});

test('oomguard estimate reads a notebook: detected values name their cell and the line within it', async () => {
  const cells = [
    { cell_type: 'markdown', metadata: {}, source: ['# GPT-2 fine-tuning'] },
    { cell_type: 'code', metadata: {}, outputs: [], execution_count: 1, source: ['!pip install transformers\n', 'import torch\n', 'from transformers import AutoModelForCausalLM\n', 'model = AutoModelForCausalLM.from_pretrained("gpt2").cuda()'] },
    { cell_type: 'code', metadata: {}, outputs: [], execution_count: 2, source: ['%%time\n', 'print("setup")'] },
    { cell_type: 'code', metadata: {}, outputs: [], execution_count: 3, source: ['optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)\n', 'batch_size = 8\n', 'input_ids = torch.randint(0, 50257, (batch_size, 512), device="cuda")\n', 'for step in range(10):\n', '    loss = model(input_ids, labels=input_ids).loss\n', '    loss.backward()\n', '    optimizer.step()\n', '    optimizer.zero_grad()'] },
  ];
  const dir = project({ 'gpt2.ipynb': JSON.stringify({ nbformat: 4, nbformat_minor: 5, metadata: {}, cells }, null, 1) });
  const json = await run(dir, 'estimate', 'gpt2.ipynb', '--json');
  assert.equal(json.code, 0, json.stderr);
  const result = JSON.parse(json.stdout) as { file: string; peakAllocated: number; detected: { model: { name: string; cell?: number; line: number }; batchSize: { value: number; cell?: number; line: number }; optimizer: { cell?: number; line: number } } };
  assert.equal(result.file, 'gpt2.ipynb');
  assert.equal(result.detected.model.name, 'gpt2');
  assert.deepEqual([result.detected.model.cell, result.detected.model.line], [2, 4]);
  assert.deepEqual([result.detected.batchSize.value, result.detected.batchSize.cell, result.detected.batchSize.line], [8, 4, 2]);
  assert.deepEqual([result.detected.optimizer.cell, result.detected.optimizer.line], [4, 1]);
  assert.ok(result.peakAllocated > 0);
  const table = await run(dir, 'estimate', 'gpt2.ipynb');
  assert.match(table.stdout, /batch size\s+8\s+cell 4, line 2/);
  const broken = await run(dir, 'estimate', 'missing.ipynb');
  assert.equal(broken.code, 2);
});
