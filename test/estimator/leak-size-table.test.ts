// The leak sizes the diagnostics read are plain data (estimator/leak-size-table.ts), computed where the estimate runs
// (the Node server's worker thread): they must be exactly what the estimate gives each loop's batch.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parsePython } from '../../server/src/engine/parser';
import { copyTree } from '../../server/src/engine/syntax-tree';
import type { KeptMemory } from '../../server/src/engine/types';
import { configFromDetection, detectConfig } from '../../server/src/estimator/index';
import { keptBytes, loopBatchSize } from '../../server/src/estimator/growth';
import { programOf } from '../../server/src/estimator/python-values';
import { estimatedText, keptBytesFromTable, leakSizeTable } from '../../server/src/estimator/leak-size-table';

const SCRIPT = [
  'import torch',
  'from torch.utils.data import DataLoader',
  'from transformers import GPT2LMHeadModel',
  'model = GPT2LMHeadModel.from_pretrained("gpt2").cuda()',
  'optimizer = torch.optim.AdamW(model.parameters())',
  'train_loader = DataLoader(train_set, batch_size=8)',
  'eval_loader = DataLoader(eval_set, batch_size=32)',
  'for batch in train_loader:',
  '    optimizer.zero_grad()',
  '    out = model(input_ids=batch, labels=batch)',
  '    out.loss.backward()',
  '    optimizer.step()',
  'model.eval()',
  'kept = []',
  'for batch in eval_loader:  # the evaluation batches differently',
  '    logits = model(input_ids=batch).logits',
  '    kept.append(logits)',
  'for step in range(3):',
  '    pass',
  '',
].join('\n');

test('the leak size table gives each loop what the estimate gives its batch, and the configuration elsewhere', async () => {
  const tree = (await parsePython(SCRIPT))!;
  const root = copyTree(tree, SCRIPT);
  tree.delete();
  const config = configFromDetection(detectConfig({ rootNode: root }, SCRIPT, ''), []);
  const program = programOf({ rootNode: root }, '');
  const table = leakSizeTable(config, program, root);
  const loops = root.descendantsOfType('for_statement');
  assert.deepEqual(loops.map((loop) => loopBatchSize(program, loop)), [8, 32, undefined]);
  const kinds: KeptMemory[] = ['graph', 'output', 'output[0]'];
  const sameVersion = keptBytesFromTable(table, true);
  const olderVersion = keptBytesFromTable(table, false);
  for (const kind of kinds) {
    assert.equal(sameVersion(kind), keptBytes(config, kind), kind);
    for (const loop of loops) {
      assert.equal(sameVersion(kind, loop.startPosition.row), keptBytes(config, kind, loopBatchSize(program, loop)), `${kind} at row ${loop.startPosition.row}`);
      // Sizes of an older version: its rows may be other loops, so only the configuration's batch is used.
      assert.equal(olderVersion(kind, loop.startPosition.row), keptBytes(config, kind), kind);
    }
  }
  const evalGraph = sameVersion('graph', loops[1]!.startPosition.row);
  assert.ok(evalGraph !== undefined && evalGraph > sameVersion('graph', loops[0]!.startPosition.row)!, 'the evaluation loop keeps more per batch');
});

test('what the estimate reads leaves comments out and keeps every line where it is', async () => {
  const text = 'x = 1  # one\n# alone\ny = "# not a comment"\n';
  const tree = (await parsePython(text))!;
  const root = copyTree(tree, text);
  tree.delete();
  assert.equal(estimatedText(root, text), 'x = 1\n\ny = "# not a comment"\n');
});
