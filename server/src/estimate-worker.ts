// The memory estimate's worker thread in Node (dist/estimate-worker.js, started by node-estimate-worker.ts): it
// reads a document version (its text and the server's copy of its tree, flattened) and answers with the sizes of its
// leaks (LeakSizeTable), so that the server's thread, which answers the editor, never runs the estimate for the
// diagnostics. It keeps nothing between requests.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { BusySignal } from './busy-signal';
import { pythonParser } from './engine/parser';
import { unflattenTree } from './engine/syntax-tree';
import { configFromDetection, detectConfig } from './estimator/index';
import { programOf } from './estimator/python-values';
import { estimatedText, leakSizeTable } from './estimator/leak-size-table';
import type { EstimatedSizes, EstimateWorkerData, EstimateWorkerReply, EstimateWorkerRequest } from './node-estimate-worker';
import { setServerV8Flags } from './v8-flags';

// V8 flags are the process's, and starting this thread's isolate undoes the server's young-generation setting
// (v8-flags.ts) for the server's thread too: with ten 2,000-line documents open, the server's young generation grew
// to 32 MiB (8 without this worker), and stayed. Set again as this thread starts, it grew to 16 MiB, and the server's
// resident memory once this thread had stopped was 168-170 MiB instead of 183-184 (same minutes, two runs each).
setServerV8Flags();

/** The server's signal that it has diagnostics to compute (node-estimate-worker.ts hands it over); none in tests. */
const serverBusy = (workerData as EstimateWorkerData | undefined)?.serverBusy;
const busySignal = serverBusy ? new BusySignal(serverBusy) : undefined;

/**
 * How long the server must have been idle before a step starts again once it gave way: longer than the gap between
 * an edit's diagnostics and the next keystroke of a burst of typing.
 */
const GRACE_MS = 50;
/**
 * At most this long an estimate gives way to the server, so that its sizes come even if the server never seemed idle
 * (a signal left busy by mistake). Typing pauses long before: `npm run bench` edits a 20,000-line script 400 times
 * without a pause (5 s on a quiet machine, 40 s on a loaded one), which a deadline of 5 s cut in two.
 */
const MAX_GIVING_WAY_MS = 30_000;

async function sizesOf({ text, file, lastRead, tree }: EstimateWorkerRequest): Promise<EstimatedSizes> {
  const deadline = Date.now() + MAX_GIVING_WAY_MS;
  // Between the steps of the estimate; not inside the estimate's own steps (detection, the program's model, the sizes).
  const giveWay = busySignal ? () => busySignal.waitWhileBusy(GRACE_MS, deadline) : () => undefined;
  giveWay();
  // The grammar, for what the estimate parses itself (a settings module it imports) and the queries it runs; the
  // document's own tree comes from the server (its copy, flattened). Parsing it again here held the parser's memory
  // and a copy of its own: the worker's resident memory while it ran (alternated runs, same minutes) was 38-39 MiB
  // for a 5,000-line script, 89-90 for 20,000 lines; read from the server's copy 28 and 65, in two thirds the time.
  await pythonParser();
  giveWay();
  const root = unflattenTree(tree, text);
  const read = createHash('sha256').update(estimatedText(root, text)).digest('hex');
  // Nothing the estimate reads changed (an edit in a comment): the last sizes stand, not computed again.
  if (read === lastRead) return { read, unchanged: true };
  giveWay();
  try {
    const config = configFromDetection(detectConfig({ rootNode: root }, text, file), []);
    if (config.unresolved) return { read };
    giveWay();
    const program = programOf({ rootNode: root }, file);
    giveWay();
    return { read, table: leakSizeTable(config, program, root) };
  } catch {
    // The estimate failed: no sizes, as on the server's thread (memory-estimate.ts).
    return { read };
  }
}

/**
 * The estimate is background work: on Linux this thread gives way to the server's thread and to the editor when they
 * want the CPU (on a machine with two cores, the keystrokes typed while it ran got their diagnostics later). Linux
 * sets the priority of the one thread whose id it is given; elsewhere the thread keeps the server's priority.
 */
function lowerThisThreadsPriority(): void {
  try {
    const thread = /\/task\/(\d+)$/.exec(fs.readlinkSync('/proc/thread-self'));
    if (thread) os.setPriority(Number(thread[1]), os.constants.priority.PRIORITY_LOW);
  } catch {
    // No /proc/thread-self (not Linux), or not allowed: the estimate runs at the server's priority.
  }
}

lowerThisThreadsPriority();

parentPort?.on('message', (request: EstimateWorkerRequest) => {
  sizesOf(request).then(
    (sizes) => parentPort!.postMessage({ id: request.id, sizes } satisfies EstimateWorkerReply),
    (error: unknown) => parentPort!.postMessage({ id: request.id, error: error instanceof Error ? error.message : String(error) } satisfies EstimateWorkerReply),
  );
});
