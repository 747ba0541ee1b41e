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
    'batch_size = 32',
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
  assert.ok(titles.includes('Add gradient accumulation (4 steps, micro-batch 8 instead of 32)'), titles.join(' | '));
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

test('accumulation keeps the training the same: batch size from an argparse default, step counters, stops and schedules count optimizer steps, the last window is a mean', async () => {
  const source = [
    'import argparse',
    'import torch',
    'parser = argparse.ArgumentParser()',
    'parser.add_argument("--batch-size", type=int, default=64)',
    'parser.add_argument("--max-steps", type=int, default=1000)',
    'args = parser.parse_args()',
    'loader = torch.utils.data.DataLoader(dataset, batch_size=args.batch_size, shuffle=True)',
    'global_step = 0',
    'for x, y in loader:',
    '    loss = model(x, y)',
    '    loss.backward()',
    '    optimizer.step()',
    '    scheduler.step()',
    '    optimizer.zero_grad()',
    '    global_step += 1',
    '    if global_step % 100 == 0:',
    '        print(global_step, loss.item())',
    '    if global_step >= args.max_steps:',
    '        break',
    '',
  ].join('\n');
  const offered = await refactorings(source, { line: 8, character: 0 });
  const four = offered.find((r) => r.title === 'Add gradient accumulation (4 steps, micro-batch 16 instead of 64)');
  assert.ok(four, offered.map((r) => r.title).join(' | '));
  const after = applyEdits(source, four.edits);
  // The loader's batch is divided where it is given (the argparse default keeps its other uses); the effective
  // batch is said in a comment.
  assert.match(after, /batch_size=args\.batch_size \/\/ 4, shuffle=True\)/);
  assert.match(after, /default=64\)/);
  // The counter, the logging and the max_steps stop move under the step's condition, with the scheduler.
  assert.match(after, /    if micro_step % accumulation_steps == 0:\n        optimizer\.step\(\)\n        scheduler\.step\(\)\n        optimizer\.zero_grad\(\)\n        global_step \+= 1\n        if global_step % 100 == 0:\n            print\(global_step, loss\.item\(\)\)\n        if global_step >= args\.max_steps:\n            break/);
  // The last, partial window: its gradients are rescaled to the mean before the flush step.
  assert.match(after, /if micro_step % accumulation_steps != 0:\n    for group in optimizer\.param_groups:\n        for p in group\["params"\]:\n            if p\.grad is not None:\n                p\.grad\.mul_\(accumulation_steps \/ \(micro_step % accumulation_steps\)\)\n    optimizer\.step\(\)/);
  // 8 does not divide... it does (64 / 8); 3 is never offered; a batch that 4 does not divide gets no 4.
  const odd = await refactorings(source.replace('default=64', 'default=30'), { line: 8, character: 0 });
  assert.deepEqual(odd.filter((r) => r.title.startsWith('Add gradient accumulation')).map((r) => r.title), ['Add gradient accumulation (2 steps, micro-batch 15 instead of 30)']);
  // A `return` that stops with the optimizer step (the max_steps stop, moved under its condition) ends on a full
  // window: still offered. One elsewhere in the loop would skip the micro-batches accumulated so far: not offered.
  const wrapped = (body: string) => body.replace('for x, y in loader:', 'def train():\n  for x, y in loader:');
  const stopping = wrapped(source.replace('        break', '        return'));
  assert.ok((await refactorings(stopping, { line: 9, character: 2 })).some((r) => r.title.startsWith('Add gradient accumulation')));
  const early = wrapped(source.replace('    loss.backward()', '    if loss is None:\n        return\n    loss.backward()'));
  assert.ok(!(await refactorings(early, { line: 9, character: 2 })).some((r) => r.title.startsWith('Add gradient accumulation')));
  // A batch size the script does not set (a YAML file, an imported loader): not offered, it would only grow the batch.
  const unknown = source.replace('batch_size=args.batch_size', 'batch_size=cfg["train"]["bs"]');
  assert.ok(!(await refactorings(unknown, { line: 8, character: 0 })).some((r) => r.title.startsWith('Add gradient accumulation')));
});

test('accumulation divides a schedule length taken from len(loader) before the loop, and keeps other uses of the batch setting', async () => {
  const source = [
    'import torch',
    'BATCH_SIZE = 256',
    'data = torch.randn(BATCH_SIZE * 10, 128)',
    'loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(data), batch_size=BATCH_SIZE)',
    'model = torch.nn.Linear(128, 128).cuda()',
    'optimizer = torch.optim.SGD(model.parameters(), lr=0.1)',
    'scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=3 * len(loader))',
    'for epoch in range(3):',
    '    for (x,) in loader:',
    '        model(x.cuda()).pow(2).mean().backward()',
    '        optimizer.step()',
    '        scheduler.step()',
    '        optimizer.zero_grad()',
    '',
  ].join('\n');
  const offered = await refactorings(source, { line: 8, character: 4 });
  const four = offered.find((r) => r.title === 'Add gradient accumulation (4 steps, micro-batch 64 instead of 256)');
  assert.ok(four, offered.map((r) => r.title).join(' | '));
  const after = applyEdits(source, four.edits);
  // The dataset keeps its size (BATCH_SIZE is untouched); the loader's batch is divided; the schedule counts steps.
  assert.match(after, /^BATCH_SIZE = 256$/m);
  assert.match(after, /batch_size=BATCH_SIZE \/\/ 4\)/);
  assert.match(after, /^accumulation_steps = 4 .*\nscheduler = torch\.optim\.lr_scheduler\.CosineAnnealingLR\(optimizer, T_max=3 \* -\(-len\(loader\) \/\/ accumulation_steps\)\)$/m);
});

test('checkpointing never calls gradient_checkpointing_enable on a transformers function result (a scheduler)', async () => {
  const source = [
    'import torch',
    'from transformers import get_linear_schedule_with_warmup',
    'model = Net().cuda()',
    'optimizer = torch.optim.AdamW(model.parameters())',
    'scheduler = get_linear_schedule_with_warmup(optimizer, 10, 1000)',
    'for x, y in loader:',
    '    loss = model(x, y)',
    '    loss.backward()',
    '    optimizer.step()',
    '    scheduler.step()',
    '    optimizer.zero_grad()',
    '',
  ].join('\n');
  const titles = (await refactorings(source, { line: 5, character: 0 })).map((r) => r.title);
  assert.ok(!titles.some((title) => title.includes('scheduler.gradient_checkpointing_enable')), titles.join(' | '));
});

test('each text gets its own lines and edits when refactorings of two texts alternate (the last text\'s lines are kept)', async () => {
  const script = (lossComment: string, stepComment: string) => [
    'import torch',
    'import torch.nn as nn',
    '',
    'class Unused(nn.Module):',
    '    def __init__(self, dim=1024):',
    '        super().__init__()',
    '        self.embed = nn.Linear(16, dim)',
    '        self.blocks = nn.ModuleList([nn.Linear(dim, dim) for _ in range(8)])',
    '        self.head = nn.Linear(dim, 1)',
    '',
    '    def forward(self, x):',
    '        x = self.embed(x)',
    '        for block in self.blocks:',
    '            x = block(x)',
    '        return self.head(x)',
    '',
    'class Stack(nn.Module):',
    '    def __init__(self, dim=1024):',
    '        super().__init__()',
    '        self.embed = nn.Linear(16, dim)',
    '        self.blocks = nn.ModuleList([nn.Linear(dim, dim) for _ in range(8)])',
    '        self.head = nn.Linear(dim, 1)',
    '',
    '    def forward(self, x):',
    '        x = self.embed(x)',
    '        for block in self.blocks:',
    '            x = block(x)',
    '        return self.head(x)',
    '',
    'model = Stack().cuda()',
    'loader = [(torch.randn(64, 512, 16).cuda(), torch.randn(64, 512, 1).cuda()) for _ in range(10)]',
    'optimizer = torch.optim.Adam(model.parameters())',
    'for x, y in loader:',
    '    optimizer.zero_grad()',
    `    loss = ((model(x) - y) ** 2).mean()  # ${lossComment}`,
    '    loss.backward()',
    `    optimizer.step()  # ${stepComment}`,
    '',
  ].join('\n');
  // Texts of one length whose loss lines differ in length: an edit made from the other text's lines ends elsewhere.
  const long = script('a much longer comment on the loss line', 'b');
  const short = script('a', 'a much longer comment on the step line');
  assert.equal(short.length, long.length);
  const at = { line: 33, character: 4 };
  const longFirst = await refactorings(long, at);
  const shortBetween = await refactorings(short, at);
  const longAgain = await refactorings(long, at);
  assert.ok(longFirst.length > 0);
  assert.deepEqual(longAgain, longFirst);
  assert.notDeepEqual(shortBetween.map((r) => r.edits), longFirst.map((r) => r.edits));
  // Only the class the file instantiates has its layers checkpointed.
  const titles = longFirst.map((r) => r.title);
  assert.ok(titles.includes('Enable gradient checkpointing in Stack.forward'), titles.join(' | '));
  assert.ok(!titles.some((title) => title.includes('Unused')), titles.join(' | '));
});
