// Same-minutes comparison of two server builds on what opening a document costs: cold start to the first
// diagnostics, the first edit after them (made `OOMGUARD_AB_EDIT_AFTER_MS` after they arrive), and the server's
// resident memory once the estimate worker has stopped. Builds alternate run by run, so that a loaded machine
// weighs on both alike.
//   node --import tsx scripts/bench/open-ab.ts SIZE RUNS OLD_SERVER_JS NEW_SERVER_JS
//   node --import tsx scripts/bench/open-ab.ts many RUNS OLD_SERVER_JS NEW_SERVER_JS (ten 2,000-line documents)
// A build may be followed by node's flags for it after a `|` (in place of the extension's, server/src/launch-args.ts).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { startServer } from '../../test/helpers/lsp-client';
import { generateTrainingScript } from './generate';

function residentMiB(pid: number | undefined): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : NaN;
}

/**
 * CPU time the process has used, all threads (user + system, Linux /proc, 10 ms ticks): less at the mercy of other
 * processes on a loaded machine than the wall-clock figures.
 */
function cpuMs(pid: number | undefined): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** The server's threads: the estimate worker adds its own while it runs. */
function threadCount(pid: number | undefined): number {
  return fs.readdirSync(`/proc/${pid}/task`).length;
}

/** OOMGUARD_AB_SMAPS=script: where the resident memory is, by mapping (a script reading /proc/PID/smaps). */
function smaps(pid: number | undefined, label: string): void {
  const script = process.env.OOMGUARD_AB_SMAPS;
  if (!script) return;
  console.log(`${process.env.OOMGUARD_SERVER_PATH} ${label}:\n${spawnSync('python3', [script, String(pid)], { encoding: 'utf8' }).stdout}`);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A build: the path of its dist/server.js, then after a `|` node's flags for it in place of those the extension gives
 * (launch-args.ts): `old/server.js|` starts a build as an extension without them did, `dist/server.js|--v8-pool-size=2`
 * tries another flag.
 */
function useBuild(build: string): void {
  const [serverPath, launchArgs] = build.split('|');
  process.env.OOMGUARD_SERVER_PATH = serverPath;
  if (launchArgs === undefined) delete process.env.OOMGUARD_SERVER_LAUNCH_ARGS;
  else process.env.OOMGUARD_SERVER_LAUNCH_ARGS = launchArgs;
  // A code cache folder per build: V8 rejects a cache made under other flags, and two builds of the same bundle
  // would otherwise take turns overwriting one file.
  if (codeCacheRoot) process.env.OOMGUARD_CODE_CACHE_DIR = path.join(codeCacheRoot, createHash('sha256').update(build).digest('hex').slice(0, 12));
}

let codeCacheRoot: string | undefined;

async function once(build: string, size: number, editAfterMs: number) {
  useBuild(build);
  const text = generateTrainingScript(size);
  const lines = text.split('\n');
  const uri = `file:///bench/ab_${size}.py`;
  const start = performance.now();
  const client = await startServer();
  const threadsBefore = threadCount(client.child.pid);
  const first = client.diagnostics(uri, 1, 120_000);
  await client.connection.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'python', version: 1, text } });
  await first;
  const cold = performance.now() - start;
  const coldCpu = cpuMs(client.child.pid);
  await sleep(editAfterMs);
  // A module-level edit (the kind that the statement-by-statement path does not always take).
  const line = lines.findIndex((l) => /^BLOCK_\d+_WIDTH = 256/.test(l));
  const character = lines[line]!.indexOf('256') + 1;
  const edited = client.diagnostics(uri, 2, 60_000);
  const editStart = performance.now();
  await client.connection.sendNotification('textDocument/didChange', { textDocument: { uri, version: 2 }, contentChanges: [{ range: { start: { line, character }, end: { line, character: character + 1 } }, text: '6' }] });
  await edited;
  const firstEdit = performance.now() - editStart;
  // The estimate worker stops 2 s after its last answer: wait until the server has no more threads than at its start.
  const waitStart = performance.now();
  while (threadCount(client.child.pid) > threadsBefore && performance.now() - waitStart < 20_000) await sleep(100);
  await sleep(500);
  const rss = residentMiB(client.child.pid);
  await client.close();
  return { cold, coldCpu, firstEdit, rss };
}

/**
 * Ten 2,000-line documents opened at once: resident memory 1 s after their diagnostics (as `npm run bench` read it
 * before), once the estimate worker has stopped, and after closing them.
 */
async function many(build: string) {
  useBuild(build);
  const client = await startServer();
  const threadsBefore = threadCount(client.child.pid);
  const uris = Array.from({ length: 10 }, (_, i) => `file:///bench/many_${i}.py`);
  const published = uris.map((uri) => client.diagnostics(uri, 1, 120_000));
  for (const [i, uri] of uris.entries()) {
    await client.connection.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'python', version: 1, text: generateTrainingScript(2000, i + 1) } });
  }
  await Promise.all(published);
  await sleep(1000);
  const after1s = residentMiB(client.child.pid);
  const threadsAt1s = threadCount(client.child.pid);
  const waitStart = performance.now();
  while (threadCount(client.child.pid) > threadsBefore && performance.now() - waitStart < 20_000) await sleep(100);
  await sleep(500);
  const open = residentMiB(client.child.pid);
  smaps(client.child.pid, 'open, worker stopped');
  // OOMGUARD_AB_SIGNAL: a signal for a script preloaded into the server (node's --require) to report its heap.
  if (process.env.OOMGUARD_AB_SIGNAL) {
    process.kill(client.child.pid!, process.env.OOMGUARD_AB_SIGNAL as NodeJS.Signals);
    await sleep(300);
  }
  const cleared = uris.map((uri) => client.diagnostics(uri, undefined, 30_000));
  for (const uri of uris) await client.connection.sendNotification('textDocument/didClose', { textDocument: { uri } });
  await Promise.all(cleared);
  await sleep(1000);
  const closed = residentMiB(client.child.pid);
  smaps(client.child.pid, 'closed');
  await client.close();
  return { after1s, threadsAt1s: threadsAt1s - threadsBefore, open, closed };
}

async function main() {
  if (process.argv[2] === 'many') {
    const [, runsArg, oldServer, newServer] = process.argv.slice(2);
    const builds = { old: oldServer!, new: newServer! };
    const results: Record<string, string[]> = { old: [], new: [] };
    for (let run = 0; run < Number(runsArg); run++) {
      for (const name of run % 2 === 0 ? ['old', 'new'] : ['new', 'old']) {
        const r = await many(builds[name as 'old' | 'new']);
        results[name]!.push(`1 s after: ${r.after1s.toFixed(0)} (${r.threadsAt1s} extra threads), worker stopped: ${r.open.toFixed(0)}, closed: ${r.closed.toFixed(0)}`);
      }
    }
    for (const [name, list] of Object.entries(results)) console.log(`${name} ten 2,000-line documents, RSS MiB: ${list.join('; ')}`);
    return;
  }
  const [sizeArg, runsArg, oldServer, newServer] = process.argv.slice(2);
  const size = Number(sizeArg ?? 5000);
  const runs = Number(runsArg ?? 3);
  const editAfterMs = Number(process.env.OOMGUARD_AB_EDIT_AFTER_MS ?? 0);
  const cacheFolder = fs.mkdtempSync(path.join(os.tmpdir(), 'oomguard-ab-code-cache-'));
  codeCacheRoot = cacheFolder;
  const builds = { old: oldServer!, new: newServer! };
  const results: Record<string, Array<{ cold: number; coldCpu: number; firstEdit: number; rss: number }>> = { old: [], new: [] };
  // One start each first: it writes the code cache, which the timed ones read.
  for (const serverPath of Object.values(builds)) await once(serverPath, 200, 0);
  for (let run = 0; run < runs; run++) {
    for (const name of run % 2 === 0 ? ['old', 'new'] : ['new', 'old']) results[name]!.push(await once(builds[name as 'old' | 'new'], size, editAfterMs));
  }
  fs.rmSync(cacheFolder, { recursive: true, force: true });
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)]!;
  for (const [name, list] of Object.entries(results)) {
    const show = (key: 'cold' | 'coldCpu' | 'firstEdit' | 'rss') => list.map((r) => r[key].toFixed(0)).join(' ');
    console.log(`${name} ${size} lines: cold median ${median(list.map((r) => r.cold)).toFixed(0)} ms [${show('cold')}] (server CPU median ${median(list.map((r) => r.coldCpu)).toFixed(0)} ms [${show('coldCpu')}]), first edit ${editAfterMs} ms after: median ${median(list.map((r) => r.firstEdit)).toFixed(0)} ms [${show('firstEdit')}], RSS after the estimate worker stopped: median ${median(list.map((r) => r.rss)).toFixed(0)} MiB [${show('rss')}]`);
  }
}

void main();
