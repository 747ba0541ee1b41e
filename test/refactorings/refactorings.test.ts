// Refactorings on training loops: before/after pairs (test/fixtures/refactorings/x.in.py with a
// `# refactor: <title prefix>` comment on the cursor's line, x.out.py beside it; regenerate with
// `npm run fixtures:update`), every "after" compiles with CPython, none is offered again on its own output, and,
// over every fixture and corpus file and their CRLF and tab variants, no refactoring ever breaks the syntax.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { parsePython } from '../../server/src/engine/parser';
import { SemanticModel } from '../../server/src/engine/semantic/model';
import type { Position } from '../../server/src/engine/types';
import { applyEdits } from '../../server/src/fixes/apply';
import { refactoringsAt } from '../../server/src/fixes/refactorings';
import type { Refactoring } from '../../server/src/fixes/refactorings';
import { listFiles, repoRoot } from '../helpers/analysis';
import { compileAll, requirePython3 } from '../helpers/python';

const update = process.env.UPDATE_FIXTURES === '1';
const fixtureDir = path.join(repoRoot, 'test', 'fixtures', 'refactorings');
const FAMILIES = ['Enable mixed precision', 'Enable gradient checkpointing', 'Add gradient accumulation'];


async function refactorings(text: string, position: Position): Promise<Refactoring[]> {
  const tree = await parsePython(text);
  assert.ok(tree);
  try {
    return refactoringsAt(new SemanticModel(tree, text), text, position);
  } finally {
    tree.delete();
  }
}

/** The cursor (first non-blank character of the marked line) and the title prefix the marker names. */
function marker(text: string): { position: Position; title: string } {
  const lines = text.split(/\r?\n/);
  const line = lines.findIndex((l) => /# refactor: /.test(l));
  assert.ok(line >= 0, 'no "# refactor:" marker');
  const title = /# refactor: (.*)$/.exec(lines[line]!)![1]!.trim();
  return { position: { line, character: /^[ \t]*/.exec(lines[line]!)![0].length }, title };
}

const family = (title: string) => FAMILIES.find((prefix) => title.startsWith(prefix))!;

for (const input of listFiles(fixtureDir, '.in.py')) {
  test(`refactoring ${path.basename(input)}`, async (t) => {
    const text = fs.readFileSync(input, 'utf8');
    const { position, title } = marker(text);
    const offered = await refactorings(text, position);
    const chosen = offered.find((refactoring) => refactoring.title.startsWith(title));
    assert.ok(chosen, `"${title}" not offered; offered: ${offered.map((r) => r.title).join(' | ')}`);
    const after = applyEdits(text, chosen.edits);
    const expectedFile = input.replace(/\.in\.py$/, '.out.py');
    if (update || !fs.existsSync(expectedFile)) fs.writeFileSync(expectedFile, after);
    assert.equal(after, fs.readFileSync(expectedFile, 'utf8'));
    // Line endings are kept: a CRLF file has no bare LF afterwards, an LF file no CR.
    if (text.includes('\r\n')) assert.ok(!/[^\r]\n/.test(after), 'a bare LF in a CRLF file');
    else assert.ok(!after.includes('\r'), 'a CR in an LF file');
    // Idempotent: once applied, the same refactoring is not offered again at the same place.
    const again = await refactorings(after, marker(after).position);
    assert.deepEqual(again.filter((r) => r.title.startsWith(family(chosen.title))).map((r) => r.title), []);
    if (requirePython3(t)) assert.deepEqual(compileAll([expectedFile]), []);
  });
}

test('refactorings are offered only in a training loop, and not where they are in place', async () => {
  const source = [
    'import torch',
    'model = Net().cuda()',
    'optimizer = torch.optim.AdamW(model.parameters())',
    'print("setup")',
    'for x, y in loader:',
    '    with torch.autocast(device_type="cuda", dtype=torch.bfloat16):',
    '        loss = criterion(model(x), y)',
    '    loss.backward()',
    '    optimizer.step()',
    '    optimizer.zero_grad()',
    'for x, y in val_loader:',
    '    print(model(x))',
    '',
  ].join('\n');
  assert.deepEqual(await refactorings(source, { line: 3, character: 0 }), [], 'outside any loop');
  assert.deepEqual(await refactorings(source, { line: 11, character: 4 }), [], 'in a loop that does not train');
  const titles = (await refactorings(source, { line: 4, character: 0 })).map((r) => r.title);
  assert.ok(!titles.some((title) => title.startsWith('Enable mixed precision')), titles.join(' | '));
  assert.ok(titles.includes('Add gradient accumulation (4 steps)'), titles.join(' | '));
  // Statements that share a line cannot be moved under a condition alone.
  const shared = source.replace('    optimizer.step()\n    optimizer.zero_grad()', '    optimizer.step(); optimizer.zero_grad()');
  assert.ok(!(await refactorings(shared, { line: 4, character: 0 })).some((r) => r.title.startsWith('Add gradient accumulation')));
});

function variants(text: string): Array<[string, string]> {
  return [
    ['lf', text],
    ['crlf', text.replace(/\r?\n/g, '\r\n')],
    ['tabs', text.replace(/^((?: {4})+)/gm, (spaces) => '\t'.repeat(spaces.length / 4))],
  ];
}

test('no refactoring ever produces a file that fails to parse or compile', async (t) => {
  const sources = [
    ...listFiles(path.join(repoRoot, 'test', 'fixtures'), '.py'),
    ...listFiles(path.join(repoRoot, 'test', 'corpus'), '.py'),
    ...listFiles(path.join(repoRoot, 'examples'), '.py'),
  ].filter((file) => !file.includes('syntax_error'));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'oomguard-refactorings-'));
  const written: string[] = [];
  const families = new Map<string, number>();
  for (const file of sources) {
    for (const [variant, text] of variants(fs.readFileSync(file, 'utf8'))) {
      const tree = await parsePython(text);
      assert.ok(tree);
      const brokenBefore = tree.rootNode.hasError;
      const model = new SemanticModel(tree, text);
      tree.delete();
      // Every loop's `for` line is a cursor position; each distinct refactoring is applied alone.
      const seen = new Set<string>();
      for (const loop of model.loops) {
        const position = { line: loop.startPosition.row, character: loop.startPosition.column };
        for (const refactoring of refactoringsAt(model, text, position)) {
          const after = applyEdits(text, refactoring.edits);
          if (seen.has(after)) continue;
          seen.add(after);
          families.set(family(refactoring.title), (families.get(family(refactoring.title)) ?? 0) + 1);
          const parsed = await parsePython(after);
          assert.ok(!parsed!.rootNode.hasError || brokenBefore, `${path.relative(repoRoot, file)} (${variant}): "${refactoring.title}" broke the syntax`);
          parsed!.delete();
          const out = path.join(dir, `${path.basename(file, '.py')}_${variant}_${written.length}.py`);
          fs.writeFileSync(out, after);
          written.push(out);
        }
      }
    }
  }
  // Each family must have been exercised on many files, or this test proves little.
  for (const prefix of FAMILIES) assert.ok((families.get(prefix) ?? 0) >= 10, `${prefix}: only ${families.get(prefix) ?? 0} applications`);
  if (requirePython3(t)) assert.deepEqual(compileAll(written), []);
  fs.rmSync(dir, { recursive: true, force: true });
});

test('mixed precision is not offered where the weights are already bf16 or fp16 (a cast, torch_dtype, or a bf16 checkpoint)', async () => {
  const loop = ['for x, y in loader:', '    optimizer.zero_grad()', '    loss = model(x, labels=y).loss', '    loss.backward()', '    optimizer.step()', ''];
  const cases = [
    ['import torch', 'model = Net().cuda().to(torch.bfloat16)', 'optimizer = torch.optim.AdamW(model.parameters())'],
    ['import torch', 'from transformers import AutoModelForCausalLM', 'model = AutoModelForCausalLM.from_pretrained("gpt2", torch_dtype=torch.float16)', 'optimizer = torch.optim.AdamW(model.parameters())'],
    // transformers 5 loads Qwen2.5 in the checkpoint's bf16 when no dtype is given.
    ['import torch', 'from transformers import AutoModelForCausalLM', 'model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-0.5B")', 'optimizer = torch.optim.AdamW(model.parameters())'],
  ];
  for (const head of cases) {
    const text = [...head, ...loop].join('\n');
    const titles = (await refactorings(text, { line: head.length, character: 0 })).map((r) => r.title);
    assert.ok(!titles.some((title) => title.startsWith('Enable mixed precision')), `${head[head.length - 2]}: ${titles.join(' | ')}`);
  }
  // fp32 weights still get it.
  const fp32 = ['import torch', 'model = Net().cuda()', 'optimizer = torch.optim.AdamW(model.parameters())', ...loop].join('\n');
  assert.ok((await refactorings(fp32, { line: 3, character: 0 })).some((r) => r.title.startsWith('Enable mixed precision')));
});
