// The server's CPU time per edit, by kind of edit, read from Linux's per-thread scheduler statistics (nanoseconds
// on a CPU), which a loaded machine changes far less than the wall-clock latency `npm run bench` reports. The same
// edits as the bench (each one-character edit made and undone, spread over the file), over stdio:
//   node --import tsx scripts/bench/edit-cpu.ts [SIZE=20000] [EDITS per kind=40]
// OOMGUARD_SERVER_PATH=... runs another build. Prints, per kind, the median and p95 of the main thread's CPU time
// from the change sent to the diagnostics received, and the whole process's CPU time (the GC's helper threads too);
// the estimate worker's CPU time while edits waited for their diagnostics, of its CPU time during the kind;
// THREADS=1 prints each thread's CPU time per edit; KINDS='a,b' edits those kinds in that order; WAIT_MS=0 starts editing as soon as the open is published.
import * as fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { startServer } from '../../test/helpers/lsp-client';
import { editSites, generateTrainingScript, percentile } from './generate';

const size = Number(process.argv[2] ?? 20000);
const editsPerKind = Number(process.argv[3] ?? 40);

/** Nanoseconds a thread (or, with no thread, every thread of the process) has run on a CPU. */
function cpuNanoseconds(pid: number, thread?: number): number {
  const threads = thread !== undefined ? [thread] : fs.readdirSync(`/proc/${pid}/task`).map(Number);
  let total = 0;
  for (const tid of threads) {
    try {
      total += Number(fs.readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // A thread that ended meanwhile.
    }
  }
  return total;
}

/**
 * A thread's name as Linux has it, and its nice value where it runs at a lower priority (the estimate worker lowers
 * its own: node-estimate-worker.ts), or '' where unreadable.
 */
function threadName(pid: number, tid: string): string {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    // After the name in parentheses: state, then 15 fields to the nice value (proc(5)).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const nice = Number(fields[16]);
    return fs.readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim() + (nice > 0 ? ` (nice ${nice})` : '');
  } catch {
    return '';
  }
}

/**
 * Nanoseconds the estimate worker's thread has run (the thread of the process that lowered its priority, see
 * estimate-worker.ts), by thread id: the worker may start and stop between two readings.
 */
function workerTimes(pid: number): Map<string, number> {
  const times = new Map<string, number>();
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    if (tid === String(pid) || !threadName(pid, tid).includes('nice')) continue;
    try {
      times.set(tid, Number(fs.readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]));
    } catch {
      // A thread that ended meanwhile.
    }
  }
  return times;
}

/** The CPU milliseconds the worker ran between two readings (a thread gone since counts what it had at the first). */
function workerMsBetween(before: Map<string, number>, after: Map<string, number>): number {
  let ns = 0;
  for (const [tid, time] of after) ns += time - (before.get(tid) ?? 0);
  return ns / 1e6;
}

/** CPU nanoseconds per thread of the process, by thread id ('main' for the main thread). */
function threadTimes(pid: number): Map<string, number> {
  const times = new Map<string, number>();
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      const name = tid === String(pid) ? 'main' : `${threadName(pid, tid)} ${tid}`;
      times.set(name, (times.get(name) ?? 0) + Number(fs.readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]));
    } catch {
      // A thread that ended meanwhile.
    }
  }
  return times;
}

async function main(): Promise<void> {
  const text = generateTrainingScript(size);
  const lines = text.split('\n');
  const uri = `file:///bench/train_${size}.py`;
  const client = await startServer();
  const pid = client.child.pid!;
  const first = client.diagnostics(uri, 1, 120_000);
  await client.connection.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'python', version: 1, text } });
  await first;
  // The open's pending facts and first estimate run while idle: let them finish, so that the edits are timed alone
  // (WAIT_MS=0 edits at once, as `npm run bench` does).
  await new Promise((resolve) => setTimeout(resolve, Number(process.env.WAIT_MS ?? 3000)));
  const sites = editSites(lines);
  let version = 1;
  // KINDS='function body,docstring' edits those kinds only, in that order (the bench's order otherwise).
  for (const kind of process.env.KINDS?.split(',') ?? [...new Set(sites.map((site) => site.kind))]) {
    const ofKind = sites.filter((site) => site.kind === kind);
    const mainThread: number[] = [];
    // The estimate worker's CPU while an edit waits for its diagnostics (it should give way then), and in all.
    let workerDuringEdits = 0;
    const workerAtStart = workerTimes(pid);
    const wall: number[] = [];
    const processStart = cpuNanoseconds(pid);
    const threadsBefore = threadTimes(pid);
    for (let k = 0; k < editsPerKind; k++) {
      const site = ofKind[Math.floor((k * ofKind.length) / editsPerKind)]!;
      for (const undo of [false, true]) {
        const range = kind === 'end of file'
          ? { start: { line: site.line, character: site.character + 1 }, end: { line: site.line, character: site.character + (undo ? 2 : 1) } }
          : { start: { line: site.line, character: site.character }, end: { line: site.line, character: site.character + 1 } };
        const newText = kind === 'end of file' ? (undo ? '' : ' ') : undo ? site.original : site.replacement;
        version++;
        const published = client.diagnostics(uri, version, 60_000);
        const workerBefore = workerTimes(pid);
        const cpuStart = cpuNanoseconds(pid, pid);
        const start = performance.now();
        await client.connection.sendNotification('textDocument/didChange', { textDocument: { uri, version }, contentChanges: [{ range, text: newText }] });
        await published;
        wall.push(performance.now() - start);
        mainThread.push((cpuNanoseconds(pid, pid) - cpuStart) / 1e6);
        workerDuringEdits += workerMsBetween(workerBefore, workerTimes(pid));
      }
    }
    const processMs = (cpuNanoseconds(pid) - processStart) / 1e6 / mainThread.length;
    if (process.env.THREADS) {
      const now = threadTimes(pid);
      console.log([...now].map(([name, ns]) => `${name} ${((ns - (threadsBefore.get(name) ?? 0)) / 1e6 / mainThread.length).toFixed(1)}`).join(', '));
    }
    mainThread.sort((a, b) => a - b);
    wall.sort((a, b) => a - b);
    console.log(`${kind.padEnd(14)} main-thread CPU per edit: p50 ${percentile(mainThread, 50).toFixed(1)} ms, p95 ${percentile(mainThread, 95).toFixed(1)} ms; process CPU per edit ${processMs.toFixed(1)} ms; wall p50 ${percentile(wall, 50).toFixed(1)} ms, p95 ${percentile(wall, 95).toFixed(1)} ms; ` +
      `estimate worker CPU during the edits ${workerDuringEdits.toFixed(0)} ms of ${workerMsBetween(workerAtStart, workerTimes(pid)).toFixed(0)} ms`);
  }
  await client.close();
}

void main();
