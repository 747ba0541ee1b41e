// oomguard/explainOom over stdio against the built server, as the VS Code command sends it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { startServer } from '../helpers/lsp-client';
import { EXPLAIN_OOM_REQUEST, type ExplainOomResult } from '../../server/src/protocol';

const repoRoot = path.resolve(__dirname, '..', '..');
const log = fs.readFileSync(path.join(__dirname, 'samples', 'current_gpt2.log'), 'utf8');

test('the server explains a pasted log and links the frame of a script it finds under the roots', async () => {
  const client = await startServer();
  try {
    const result = await client.connection.sendRequest<ExplainOomResult>(EXPLAIN_OOM_REQUEST, { text: log, roots: [repoRoot] });
    assert.equal(result.explanations.length, 1);
    const script = path.join(repoRoot, 'examples', 'train_gpt2.py');
    assert.equal(result.explanations[0]!.frameFile, script);
    assert.equal(result.explanations[0]!.script?.model, 'gpt2');
    assert.ok(result.markdown.includes(`${pathToFileURL(script).href}#L62`));
  } finally {
    await client.close();
  }
});

test('an open document is read from the editor, not from disk; bad params get an error, not a crash', async () => {
  const client = await startServer();
  try {
    const script = path.join(repoRoot, 'examples', 'train_gpt2.py');
    const uri = pathToFileURL(script).href;
    // The editor's unsaved text sets another batch size than the file on disk.
    const onDisk = fs.readFileSync(script, 'utf8');
    const text = onDisk.replace('"--batch-size", type=int, default=8)', '"--batch-size", type=int, default=4)');
    assert.ok(text !== onDisk, 'the example script no longer sets its batch size the way this test edits it');
    await client.connection.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'python', version: 1, text } });
    await client.diagnostics(uri, 1);
    const result = await client.connection.sendRequest<ExplainOomResult>(EXPLAIN_OOM_REQUEST, { text: log, roots: [repoRoot] });
    assert.equal(result.explanations[0]!.script?.batchSize, 4);
    await assert.rejects(client.connection.sendRequest(EXPLAIN_OOM_REQUEST, { roots: [] }), /needs the error text/);
    const none = await client.connection.sendRequest<ExplainOomResult>(EXPLAIN_OOM_REQUEST, { text: 'no error here' });
    assert.deepEqual(none.explanations, []);
  } finally {
    await client.close();
  }
});
