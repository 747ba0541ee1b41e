// A CPU profile of the server's cold start: a fresh server (its code cache written by one start before) opens a
// generated script and the profile covers everything up to its first diagnostics and the exit after them.
//   node --import tsx scripts/bench/cold-profile.ts SIZE PROFILE_FOLDER [SERVER_JS]
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { startServer } from '../../test/helpers/lsp-client';
import { generateTrainingScript } from './generate';

async function open(size: number): Promise<number> {
  const text = generateTrainingScript(size);
  const uri = `file:///bench/cold_${size}.py`;
  const start = performance.now();
  const client = await startServer();
  const first = client.diagnostics(uri, 1, 120_000);
  await client.connection.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'python', version: 1, text } });
  await first;
  const cold = performance.now() - start;
  await client.close();
  return cold;
}

async function main(): Promise<void> {
  const [sizeArg, folder, serverPath] = process.argv.slice(2);
  if (serverPath) process.env.OOMGUARD_SERVER_PATH = serverPath;
  process.env.OOMGUARD_CODE_CACHE_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'oomguard-cold-profile-'));
  await open(200);
  process.env.OOMGUARD_SERVER_NODE_ARGS = `--cpu-prof --cpu-prof-interval=200 --cpu-prof-dir=${folder}`;
  console.log(`cold start to first diagnostics: ${(await open(Number(sizeArg ?? 20000))).toFixed(0)} ms`);
  fs.rmSync(process.env.OOMGUARD_CODE_CACHE_DIR, { recursive: true, force: true });
}

void main();
