// dist/server.js runs the server's bundle from a V8 code cache in the user's cache folder (server/src/code-cache.ts):
// the first start writes it, later starts read it, and a cache that is broken or cannot be written never stops
// the server or changes what it finds.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { startServer } from '../helpers/lsp-client';

const uri = 'file:///work/train.py';
const source = ['import torch', 'losses = []', 'for x, y in loader:', '    loss = model(x)', '    loss.backward()', '    losses.append(loss)', ''].join('\n');
const folders: string[] = [];

after(() => {
  for (const folder of folders) fs.rmSync(folder, { recursive: true, force: true });
});

/** Starts the server with its code cache in `folder`, opens the script and returns its diagnostics' codes. */
async function findingsWithCacheIn(folder: string): Promise<string[]> {
  const previous = process.env.OOMGUARD_CODE_CACHE_DIR;
  process.env.OOMGUARD_CODE_CACHE_DIR = folder;
  try {
    const client = await startServer();
    const published = client.diagnostics(uri, 1);
    await client.connection.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'python', version: 1, text: source } });
    const diagnostics = await published;
    await client.close();
    assert.equal(client.stderr(), '');
    return diagnostics.map((diagnostic) => String(diagnostic.code));
  } finally {
    if (previous === undefined) delete process.env.OOMGUARD_CODE_CACHE_DIR;
    else process.env.OOMGUARD_CODE_CACHE_DIR = previous;
  }
}

function newFolder(): string {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'oomguard-code-cache-'));
  folders.push(folder);
  return folder;
}

const cacheFiles = (folder: string) => fs.readdirSync(folder).filter((name) => name.endsWith('.v8cache'));

test('the first start writes the cache, the next one reads it as it is and finds the same', async () => {
  const folder = path.join(newFolder(), 'nested');
  const findings = await findingsWithCacheIn(folder);
  assert.ok(findings.includes('OOM101'), `expected OOM101 in ${findings.join(', ')}`);
  const [cacheFile] = cacheFiles(folder);
  assert.ok(cacheFile, 'no cache was written');
  const written = fs.statSync(path.join(folder, cacheFile));
  assert.ok(written.size > 100_000, `a cache of ${written.size} bytes holds no compiled functions`);
  assert.deepEqual(await findingsWithCacheIn(folder), findings);
  // Accepted, so not written again.
  assert.equal(fs.statSync(path.join(folder, cacheFile)).mtimeMs, written.mtimeMs);
  assert.deepEqual(cacheFiles(folder), [cacheFile]);
});

test('a broken cache is compiled around and replaced; a folder that cannot be made changes nothing', async () => {
  const folder = newFolder();
  const findings = await findingsWithCacheIn(folder);
  const [cacheFile] = cacheFiles(folder);
  assert.ok(cacheFile);
  const cachePath = path.join(folder, cacheFile);
  const garbage = Buffer.alloc(fs.statSync(cachePath).size, 7);
  fs.writeFileSync(cachePath, garbage);
  assert.deepEqual(await findingsWithCacheIn(folder), findings);
  assert.notDeepEqual(fs.readFileSync(cachePath), garbage, 'the rejected cache was not replaced');

  // A file where the folder should be: no cache, the same findings.
  const blocked = path.join(newFolder(), 'not-a-folder');
  fs.writeFileSync(blocked, '');
  assert.deepEqual(await findingsWithCacheIn(path.join(blocked, 'cache')), findings);
  // No folder at all (OOMGUARD_CODE_CACHE_DIR empty): the bundle is plainly required.
  assert.deepEqual(await findingsWithCacheIn(''), findings);
});

test('the bundles Node runs hold only ASCII characters, so that their source is a one-byte string', () => {
  // A single character beyond ASCII (a comment esbuild keeps, a pattern) makes Node decode the whole file into a
  // two-byte string: 4 MB of heap kept for the server's 2 MB bundle, and a slower start (scripts/build.mjs).
  const dist = path.join(__dirname, '..', '..', 'dist');
  for (const file of ['server.js', 'server-main.js', 'estimate-worker.js', 'cli.js']) {
    const text = fs.readFileSync(path.join(dist, file), 'utf8');
    const beyond = /[^\x00-\x7f]/.exec(text);
    assert.equal(beyond, null, `${file}: ${beyond ? JSON.stringify(text.slice(beyond.index - 40, beyond.index + 10)) : ''}`);
  }
});
