// The Node server's side of the memory estimate's worker thread (estimate-worker.ts): started when an estimate is
// asked for, stopped once none has been for a moment (its heap keeps what the estimate built; it parses no document:
// the server hands it its copy of the tree, syntax-tree.ts flattenTree). A worker that cannot start or that fails
// leaves the estimate to the server's thread.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as WorkerThreads from 'node:worker_threads';
import type { Worker } from 'node:worker_threads';
import { BusySignal } from './busy-signal';
import type { FlatTree } from './engine/syntax-tree';
import type { LeakSizeTable } from './estimator/leak-size-table';

/** node:worker_threads, loaded when the worker first starts: not on the way to a start's first diagnostics. */
let workerThreads: typeof WorkerThreads | undefined;

export interface EstimateWorkerRequest {
  id: number;
  text: string;
  file: string;
  /** What the last estimate of the document read (EstimatedSizes.read): the same again is not estimated again. */
  lastRead?: string;
  /** The server's copy of the text's tree, flattened: the worker reads it instead of parsing the text again. */
  tree: FlatTree;
}

/** What the worker is started with. */
export interface EstimateWorkerData {
  /** The server thread's BusySignal: the worker gives way while the server computes diagnostics. */
  serverBusy: SharedArrayBuffer;
}

/** The leak sizes of a version, and a digest of what the estimate read (its text without comments). */
export interface EstimatedSizes {
  read: string;
  /** Absent where `read` is the request's `lastRead`: the sizes are the last ones. */
  table?: LeakSizeTable;
  unchanged?: true;
}

export type EstimateWorkerReply = { id: number; sizes: EstimatedSizes } | { id: number; error: string };

/** The worker's bundle, beside the server's (dist/); absent when the server runs from source (tests). */
const WORKER_FILE = path.join(__dirname, 'estimate-worker.js');

/**
 * How long the worker stays after its last answer: through the pauses of a burst of typing, not so long that a
 * server left idle holds more than its documents.
 */
const STOP_WHEN_IDLE_MS = 2_000;

/**
 * How long the server must have been idle before a worker starts for requests made while it was busy (the worker's
 * own pauses, estimate-worker.ts, wait as long), and how long such requests wait at most.
 */
const STARTS_AFTER_IDLE_MS = 50;
const MAX_START_DELAY_MS = 30_000;

export interface EstimateWorker {
  /** The leak sizes of one version of a document, computed in the worker; rejects where the worker cannot run. */
  leakSizes(text: string, tree: FlatTree, file: string, lastRead: string | undefined): Promise<EstimatedSizes>;
  /** Whether the server has diagnostics to compute: meanwhile the worker pauses its estimate (busy-signal.ts). */
  serverBusy(busy: boolean): void;
}

export function estimateWorker(): EstimateWorker | undefined {
  if (!fs.existsSync(WORKER_FILE)) return undefined;
  let worker: Worker | undefined;
  let idleTimer: NodeJS.Timeout | undefined;
  let nextId = 0;
  const busy = new BusySignal();
  let serverIsBusy = false;
  /** Requests made while the server was busy and no worker ran: the worker starts once the server is idle. */
  const queued: EstimateWorkerRequest[] = [];
  let startTimer: NodeJS.Timeout | undefined;
  let startDeadline: NodeJS.Timeout | undefined;
  const waiting = new Map<number, { resolve: (sizes: EstimatedSizes) => void; reject: (error: Error) => void }>();
  const failAll = (error: Error) => {
    worker = undefined;
    queued.length = 0;
    for (const { reject } of waiting.values()) reject(error);
    waiting.clear();
  };
  const stopWhenIdle = () => {
    clearTimeout(idleTimer);
    if (waiting.size > 0) return;
    idleTimer = setTimeout(() => {
      const stopping = worker;
      worker = undefined;
      void stopping?.terminate();
    }, STOP_WHEN_IDLE_MS);
    idleTimer.unref();
  };
  const started = (): Worker => {
    clearTimeout(idleTimer);
    if (worker) return worker;
    workerThreads ??= require('node:worker_threads') as typeof WorkerThreads;
    const running = new workerThreads.Worker(WORKER_FILE, { workerData: { serverBusy: busy.buffer } satisfies EstimateWorkerData });
    // The worker never keeps the server alive: an editor that closes the server's input ends it.
    running.unref();
    running.on('message', (reply: EstimateWorkerReply) => {
      const request = waiting.get(reply.id);
      if (!request) return;
      waiting.delete(reply.id);
      if ('error' in reply) request.reject(new Error(reply.error));
      else request.resolve(reply.sizes);
      stopWhenIdle();
    });
    running.on('error', (error) => failAll(error));
    running.on('exit', (code) => {
      if (worker === running) failAll(new Error(`the estimate worker stopped (exit code ${code})`));
    });
    worker = running;
    return running;
  };
  const post = (request: EstimateWorkerRequest) => {
    try {
      // The tree's rows move to the worker rather than being copied.
      started().postMessage(request, [request.tree.data.buffer as ArrayBuffer]);
    } catch (error) {
      const asked = waiting.get(request.id);
      waiting.delete(request.id);
      asked?.reject(error instanceof Error ? error : new Error(String(error)));
    }
  };
  const startQueued = () => {
    clearTimeout(startTimer);
    clearTimeout(startDeadline);
    startTimer = startDeadline = undefined;
    for (const request of queued.splice(0)) post(request);
  };
  return {
    leakSizes(text, tree, file, lastRead) {
      return new Promise((resolve, reject) => {
        const id = nextId++;
        waiting.set(id, { resolve, reject });
        const request = { id, text, file, lastRead, tree } satisfies EstimateWorkerRequest;
        if (worker) {
          post(request);
          return;
        }
        // Starting the thread (loading its code) cannot pause: it waits until the server has been idle a moment, as
        // the estimate's steps do, and for a while at most.
        queued.push(request);
        if (!serverIsBusy) startTimer ??= setTimeout(startQueued, STARTS_AFTER_IDLE_MS).unref();
        startDeadline ??= setTimeout(startQueued, MAX_START_DELAY_MS).unref();
      });
    },
    serverBusy(isBusy) {
      serverIsBusy = isBusy;
      busy.set(isBusy);
      clearTimeout(startTimer);
      startTimer = undefined;
      if (!isBusy && queued.length > 0) startTimer = setTimeout(startQueued, STARTS_AFTER_IDLE_MS).unref();
    },
  };
}
