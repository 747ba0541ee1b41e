// What a server's start loads before its first diagnostics: Node's own modules cost a start their initialisation,
// so those needed only later (the estimate's worker thread, the code cache's writing) or never over stdio (a pipe's
// random name, npm's global folder) are loaded on first use (scripts/build.mjs, code-cache.ts,
// node-estimate-worker.ts), and the launcher names the code cache by a digest the build computed.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { startServer } from '../helpers/lsp-client';

const dist = path.join(__dirname, '..', '..', 'dist');
const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'oomguard-startup-modules-'));

after(() => fs.rmSync(folder, { recursive: true, force: true }));

/** A script preloaded into the server: writes Node's modules loaded so far to stderr when the first diagnostics go out. */
const RECORDER = `
const write = process.stdout.write.bind(process.stdout);
let recorded = false;
process.stdout.write = (chunk, ...rest) => {
  if (!recorded && String(chunk).includes('textDocument/publishDiagnostics')) {
    recorded = true;
    const loaded = process.moduleLoadList.filter((name) => name.startsWith('NativeModule ')).map((name) => name.slice('NativeModule '.length));
    process.stderr.write('LOADED ' + JSON.stringify(loaded) + '\\n');
  }
  return write(chunk, ...rest);
};
`;

/** Node's modules loaded by a start from the code cache in `cacheFolder` once it has published its first diagnostics. */
async function modulesAtFirstDiagnostics(cacheFolder: string): Promise<string[]> {
  const recorder = path.join(folder, 'recorder.js');
  fs.writeFileSync(recorder, RECORDER);
  const saved = { cache: process.env.OOMGUARD_CODE_CACHE_DIR, args: process.env.OOMGUARD_SERVER_NODE_ARGS };
  process.env.OOMGUARD_CODE_CACHE_DIR = cacheFolder;
  process.env.OOMGUARD_SERVER_NODE_ARGS = `--require ${recorder}`;
  try {
    const client = await startServer();
    const uri = 'file:///work/start.py';
    const published = client.diagnostics(uri, 1);
    await client.connection.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'python', version: 1, text: 'import torch\nx = torch.zeros(3)\n' } });
    await published;
    await client.close();
    const line = client.stderr().split('\n').find((entry) => entry.startsWith('LOADED '));
    assert.ok(line, `the recorder wrote nothing: ${client.stderr()}`);
    return JSON.parse(line.slice('LOADED '.length)) as string[];
  } finally {
    for (const [name, value] of [['OOMGUARD_CODE_CACHE_DIR', saved.cache], ['OOMGUARD_SERVER_NODE_ARGS', saved.args]] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

test('a start from the code cache loads neither crypto, child_process, worker_threads nor perf_hooks before its first diagnostics', async () => {
  const cacheFolder = path.join(folder, 'cache');
  // The first start writes the cache; the second reads it, as every later start does.
  await modulesAtFirstDiagnostics(cacheFolder);
  const loaded = await modulesAtFirstDiagnostics(cacheFolder);
  assert.ok(loaded.includes('vm') && loaded.includes('fs'), `the list is Node's modules: ${loaded.join(', ')}`);
  for (const name of ['crypto', 'child_process', 'worker_threads', 'perf_hooks']) {
    assert.ok(!loaded.includes(name), `${name} is loaded before the first diagnostics`);
  }
});

test("the launcher holds the digest of the server's bundle as built", () => {
  const bundle = fs.readFileSync(path.join(dist, 'server-main.js'));
  const launcher = fs.readFileSync(path.join(dist, 'server.js'), 'utf8');
  const digest = /\{ bytes: (\d+), sha256: "([0-9a-f]{64})" \}/.exec(launcher);
  assert.ok(digest, 'no digest in dist/server.js');
  assert.equal(Number(digest[1]), bundle.length);
  assert.equal(digest[2], createHash('sha256').update(bundle).digest('hex'));
});
