// Protocol test: the built server advertises source.fixAll.oomguard and answers the request that VS Code sends
// for `"editor.codeActionsOnSave": { "source.fixAll.oomguard": "explicit" }` with one edit of every safe fix.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { CodeAction } from 'vscode-languageserver-protocol/node';
import { applyEdits } from '../../server/src/fixes/apply';
import { startServer } from '../helpers/lsp-client';
import type { TestClient } from '../helpers/lsp-client';

const uri = 'untitled:fix_all.py';
const source = [
  'import torch',
  'x = 1  # noqa: OOM101',
  'for x, y in loader:',
  '    optimizer.zero_grad()',
  '    loss = criterion(model(x), y)',
  '    loss.backward()',
  '    optimizer.step()',
  '    torch.cuda.empty_cache()',
  '',
].join('\n');

let client: TestClient;

before(async () => {
  client = await startServer();
});

after(async () => {
  await client.close();
});

test('codeActionsOnSave: source.fixAll.oomguard applies the safe fixes in one action', async () => {
  const provider = client.initializeResult.capabilities.codeActionProvider;
  assert.ok(typeof provider === 'object' && provider.codeActionKinds?.includes('source.fixAll.oomguard'), JSON.stringify(provider));
  const published = client.diagnostics(uri, 1);
  await client.connection.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'python', version: 1, text: source } });
  const diagnostics = await published;
  assert.deepEqual(diagnostics.map((d) => d.code).sort(), ['OOM100', 'OOM106']);
  const actions = (await client.connection.sendRequest('textDocument/codeAction', {
    textDocument: { uri },
    range: { start: { line: 0, character: 0 }, end: { line: 9, character: 0 } },
    context: { diagnostics: [], only: ['source.fixAll'], triggerKind: 2 },
  })) as CodeAction[];
  assert.equal(actions.length, 1);
  assert.equal(actions[0]!.kind, 'source.fixAll.oomguard');
  const fixed = applyEdits(source, actions[0]!.edit!.changes![uri]!);
  assert.equal(fixed, source.replace('x = 1  # noqa: OOM101', 'x = 1').replace('    torch.cuda.empty_cache()\n', ''));
});

test('the quick fix menu next to a finding offers "Fix all auto-fixable problems" with the same edit', async () => {
  const fixAllUri = 'untitled:fix_all_quickfix.py';
  const published = client.diagnostics(fixAllUri, 1);
  await client.connection.sendNotification('textDocument/didOpen', { textDocument: { uri: fixAllUri, languageId: 'python', version: 1, text: source } });
  const diagnostics = await published;
  const finding = diagnostics.find((d) => d.code === 'OOM106')!;
  // What VS Code sends for Ctrl+. on the finding: its diagnostics, and `only` absent or quickfix.
  for (const only of [undefined, ['quickfix']]) {
    const actions = (await client.connection.sendRequest('textDocument/codeAction', {
      textDocument: { uri: fixAllUri },
      range: finding.range,
      context: { diagnostics: [finding], ...(only ? { only } : {}), triggerKind: 1 },
    })) as CodeAction[];
    const all = actions.filter((action) => action.title === 'Fix all auto-fixable problems');
    assert.equal(all.length, 1, JSON.stringify(actions.map((a) => a.title)));
    assert.equal(all[0]!.kind, 'quickfix');
    // Not the source action: that one is listed only when asked for.
    assert.ok(!actions.some((action) => action.kind === 'source.fixAll.oomguard'));
    const fixed = applyEdits(source, all[0]!.edit!.changes![fixAllUri]!);
    assert.equal(fixed, source.replace('x = 1  # noqa: OOM101', 'x = 1').replace('    torch.cuda.empty_cache()\n', ''));
  }
  // Without a finding of ours in the request (a cursor on a clean line), nothing.
  const clean = (await client.connection.sendRequest('textDocument/codeAction', {
    textDocument: { uri: fixAllUri },
    range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
    context: { diagnostics: [], triggerKind: 1 },
  })) as CodeAction[];
  assert.ok(!clean.some((action) => action.title === 'Fix all auto-fixable problems'));
});
