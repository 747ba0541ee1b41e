// The editor's estimate is computed once per document version, and not again for a version whose code is the same
// as the last estimated one's (an edit inside a comment): the estimate must never be what makes typing slow.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DocumentStore } from '../../server/src/engine/documents';
import { baseEstimate } from '../../server/src/features/memory-estimate';
import type { ServerContext } from '../../server/src/features/context';
import { repoRoot } from '../helpers/analysis';

test('an edit inside a comment keeps the estimate; an edit to code computes it again', async () => {
  const text = fs.readFileSync(path.join(repoRoot, 'examples', 'train_gpt2.py'), 'utf8');
  const store = new DocumentStore();
  const context = { modelOf: (state) => store.modelOf(state) } as Pick<ServerContext, 'modelOf'> as ServerContext;
  const uri = 'mem://train.py';
  let state = (await store.open(uri, 1, text))!;
  const first = baseEstimate(context, state);
  assert.ok(first && 'config' in first);

  // A comment appended to the batch size's line: same code, same lines.
  const lines = text.split('\n');
  const batchLine = lines.findIndex((line) => line.includes('--batch-size'));
  const batchText = lines[batchLine]!;
  const lineEnd = { line: batchLine, character: batchText.length };
  state = (await store.change(uri, 2, [{ range: { start: lineEnd, end: lineEnd }, text: '  # 注释 note 🙂' }]))!;
  const afterComment = baseEstimate(context, state);
  assert.ok(afterComment && 'config' in afterComment);
  assert.equal(afterComment.version, 2);
  assert.equal(afterComment.config, first.config, 'the configuration is the one computed for version 1');

  // The batch size changes: the estimate is computed again and says so.
  const at = batchText.indexOf('default=8');
  assert.ok(at >= 0, batchText);
  const start = { line: batchLine, character: at + 'default='.length };
  state = (await store.change(uri, 3, [{ range: { start, end: { line: batchLine, character: start.character + 1 } }, text: '16' }]))!;
  const afterCode = baseEstimate(context, state);
  assert.ok(afterCode && 'config' in afterCode);
  assert.notEqual(afterCode.config, first.config);
  assert.equal(afterCode.config.batchSize, 16);
});
