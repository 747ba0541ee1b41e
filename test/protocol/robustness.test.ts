// Protocol-level robustness: malformed requests get "invalid params" (-32602) with a plain message, a change with
// a negative range is refused, and a document over the size limit is never parsed, so it holds up no other one.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Diagnostic } from 'vscode-languageserver-protocol/node';
import { startServer } from '../helpers/lsp-client';
import type { TestClient } from '../helpers/lsp-client';

let client: TestClient;
const uri = 'file:///work/small.py';
const source = ['import torch', 'losses = []', 'for x, y in loader:', '    loss = model(x)', '    loss.backward()', '    losses.append(loss)', ''].join('\n');

before(async () => {
  client = await startServer();
  const published = client.diagnostics(uri, 1);
  await client.connection.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'python', version: 1, text: source } });
  await published;
});

after(async () => {
  await client.close();
});

const rejectsWithInvalidParams = (promise: Promise<unknown>) =>
  assert.rejects(promise, (error: { code: number; message: string }) => {
    assert.equal(error.code, -32602);
    assert.match(error.message, /invalid parameters/);
    return true;
  });

test('malformed hover, code action and CodeLens parameters are answered with -32602 and a plain message', async () => {
  await rejectsWithInvalidParams(client.connection.sendRequest('textDocument/hover', { textDocument: { uri }, position: { line: -1, character: 'x' } }));
  await rejectsWithInvalidParams(client.connection.sendRequest('textDocument/hover', { position: { line: 0, character: 0 } }));
  await rejectsWithInvalidParams(client.connection.sendRequest('textDocument/codeAction', { textDocument: { uri }, range: { start: { line: 3, character: 0 }, end: { line: 1, character: 0 } }, context: { diagnostics: [] } }));
  await rejectsWithInvalidParams(client.connection.sendRequest('textDocument/codeAction', { textDocument: { uri }, context: { diagnostics: [] } }));
  await rejectsWithInvalidParams(client.connection.sendRequest('textDocument/codeLens', { textDocument: {} }));
});

test('a didChange with a negative character is refused and the document stays as it was', async () => {
  await client.connection.sendNotification('textDocument/didChange', {
    textDocument: { uri, version: 2 },
    contentChanges: [{ range: { start: { line: 5, character: -4 }, end: { line: 5, character: 0 } }, text: 'X' }],
  });
  // A valid edit afterwards applies to the unchanged text: the finding moves down one line, nothing else changed.
  const published = client.diagnostics(uri, 3);
  await client.connection.sendNotification('textDocument/didChange', {
    textDocument: { uri, version: 3 },
    contentChanges: [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, text: '# top\n' }],
  });
  const diagnostics = await published;
  assert.deepEqual(diagnostics.map((d) => `${d.code}@${d.range.start.line}:${d.range.start.character}`), ['OOM101@6:4']);
});

test('a document over the size limit is not parsed and does not hold up another document', async () => {
  const bigUri = 'file:///work/huge.py';
  const big = 'x = 1\n'.repeat(3_500_000); // 21 MB
  const bigPublished = client.diagnostics(bigUri, 1, 60_000);
  const started = performance.now();
  await client.connection.sendNotification('textDocument/didOpen', { textDocument: { uri: bigUri, languageId: 'python', version: 1, text: big } });
  const smallPublished = client.diagnostics(uri, 4);
  await client.connection.sendNotification('textDocument/didChange', {
    textDocument: { uri, version: 4 },
    contentChanges: [{ range: { start: { line: 0, character: 0 }, end: { line: 1, character: 0 } }, text: '' }],
  });
  const small: Diagnostic[] = await smallPublished;
  assert.deepEqual(small.map((d) => d.code), ['OOM101']);
  assert.deepEqual(await bigPublished, []);
  // Reading 21 MB over stdio takes its time; parsing and analysing it would take many seconds more.
  assert.ok(performance.now() - started < 10_000, `took ${Math.round(performance.now() - started)} ms`);
  await client.connection.sendNotification('textDocument/didClose', { textDocument: { uri: bigUri } });
});
