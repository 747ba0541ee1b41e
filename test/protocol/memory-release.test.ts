// A closed document leaves nothing on the server's heap (issue #18), also when it closes soon after it opened: while
// the timer that would let its tree go (server.ts releaseTreeWhenIdle) is still pending, and while the estimate
// worker may still be computing its leak sizes (features/leak-sizes.ts).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { generateTrainingScript } from '../../scripts/bench/generate';
import { repoRoot } from '../helpers/analysis';
import { startServer } from '../helpers/lsp-client';
import type { TestClient } from '../helpers/lsp-client';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The server's live heap after a full collection, in bytes (helpers/heap-probe.cjs). */
async function liveHeap(client: TestClient, probeFile: string): Promise<number> {
  fs.rmSync(probeFile, { force: true });
  client.child.kill('SIGUSR2');
  for (let waited = 0; !fs.existsSync(probeFile) && waited < 10_000; waited += 50) await sleep(50);
  return Number(fs.readFileSync(probeFile, 'utf8'));
}

async function open(client: TestClient, uri: string, text: string): Promise<void> {
  const published = client.diagnostics(uri, 1, 60_000);
  await client.connection.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'python', version: 1, text } });
  await published;
}

async function close(client: TestClient, uri: string): Promise<void> {
  const cleared = client.diagnostics(uri, undefined, 30_000);
  await client.connection.sendNotification('textDocument/didClose', { textDocument: { uri } });
  await cleared;
}

test('a document closed right after its diagnostics leaves its memory to the collection that follows', async () => {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'oomguard-heap-probe-'));
  const probeFile = path.join(folder, 'heap');
  const previousArgs = process.env.OOMGUARD_SERVER_NODE_ARGS;
  process.env.OOMGUARD_SERVER_NODE_ARGS = `${previousArgs ?? ''} --require ${path.join(repoRoot, 'test', 'helpers', 'heap-probe.cjs')}`;
  process.env.OOMGUARD_HEAP_PROBE_FILE = probeFile;
  const client = await startServer();
  try {
    // A small script first: what any analysis compiles and caches for good is on the heap before the baseline.
    await open(client, 'file:///work/small.py', generateTrainingScript(100, 1));
    await close(client, 'file:///work/small.py');
    const before = await liveHeap(client, probeFile);
    await open(client, 'file:///work/large.py', generateTrainingScript(2000, 2));
    // While it is open, the 2,000-line document holds more than the margin below (its tree copy, model and
    // findings): otherwise the check after the close could not tell a leak from nothing.
    const whileOpen = await liveHeap(client, probeFile);
    assert.ok(whileOpen - before > 2 * 2 ** 20, `the open document holds only ${((whileOpen - before) / 2 ** 20).toFixed(1)} MiB`);
    await close(client, 'file:///work/large.py');
    // The work an analysis leaves queued (its facts, a slice at a time) runs out within this; well under the 10 s
    // after which an unedited document lets its tree go.
    await sleep(1000);
    const after = await liveHeap(client, probeFile);
    assert.ok(after - before < 2 * 2 ** 20, `the heap grew by ${((after - before) / 2 ** 20).toFixed(1)} MiB after the document closed`);
  } finally {
    await client.close();
    if (previousArgs === undefined) delete process.env.OOMGUARD_SERVER_NODE_ARGS;
    else process.env.OOMGUARD_SERVER_NODE_ARGS = previousArgs;
    delete process.env.OOMGUARD_HEAP_PROBE_FILE;
    fs.rmSync(folder, { recursive: true, force: true });
  }
});
