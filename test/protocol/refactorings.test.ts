// Protocol test: the built server advertises refactor.rewrite and offers the training-loop refactorings at a
// training loop, as an editor's lightbulb asks for them; the edits it returns apply to the document.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { CodeAction } from 'vscode-languageserver-protocol/node';
import { applyEdits } from '../../server/src/fixes/apply';
import { startServer } from '../helpers/lsp-client';
import type { TestClient } from '../helpers/lsp-client';

const uri = 'file:///work/train_refactor.py';
const source = [
  'import torch',
  'batch_size = 32',
  'model = Net().cuda()',
  'optimizer = torch.optim.AdamW(model.parameters())',
  'for x, y in loader:',
  '    optimizer.zero_grad()',
  '    loss = criterion(model(x), y)',
  '    loss.backward()',
  '    optimizer.step()',
  '',
].join('\n');

let client: TestClient;

before(async () => {
  client = await startServer();
});

after(async () => {
  await client.close();
});

async function actionsAt(line: number, character: number, only?: string[]): Promise<CodeAction[]> {
  return (await client.connection.sendRequest('textDocument/codeAction', {
    textDocument: { uri },
    range: { start: { line, character }, end: { line, character } },
    context: { diagnostics: [], ...(only ? { only } : {}) },
  })) as CodeAction[];
}

test('the server offers mixed precision and accumulation as refactor.rewrite on a training loop', async () => {
  const published = client.diagnostics(uri, 1);
  await client.connection.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'python', version: 1, text: source } });
  await published;
  const actions = await actionsAt(4, 0);
  const titles = actions.map((action) => action.title);
  for (const title of ['Enable mixed precision (AMP, bfloat16)', 'Enable mixed precision (AMP, float16 with GradScaler)', 'Add gradient accumulation (4 steps, micro-batch 8 instead of 32)']) {
    assert.ok(titles.includes(title), titles.join(' | '));
  }
  assert.ok(actions.every((action) => action.kind === 'refactor.rewrite'));
  const amp = actions.find((action) => action.title === 'Enable mixed precision (AMP, bfloat16)')!;
  const edited = applyEdits(source, amp.edit!.changes![uri]!);
  assert.match(edited, /\n {4}with torch\.autocast\(device_type="cuda", dtype=torch\.bfloat16\):\n {8}loss = criterion\(model\(x\), y\)\n {4}loss\.backward\(\)/);
});

test('a client that asks only for quick fixes, or a cursor outside any loop, gets no refactoring', async () => {
  assert.deepEqual(await actionsAt(7, 4, ['quickfix']), []);
  assert.deepEqual((await actionsAt(7, 4, ['refactor'])).length > 0, true);
  assert.deepEqual(await actionsAt(1, 0), []);
  assert.equal(client.stderr(), '');
});

test('the server advertises refactor.rewrite among its code action kinds', () => {
  const provider = client.initializeResult.capabilities.codeActionProvider;
  assert.ok(typeof provider === 'object' && provider.codeActionKinds?.includes('refactor.rewrite'), JSON.stringify(provider));
});
