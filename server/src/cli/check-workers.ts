// `oomguard check` over many files spreads them over worker threads, one per core (at most one per
// MIN_FILES_PER_WORKER files), each running the same analysis as one thread would. The threads take the files one at
// a time from a shared counter (CheckQueue): a thread that started late (a worker loads the bundle and warms up its
// own compiled code first) or met longer files takes fewer, where fixed shares left the others waiting for it. The
// outcomes come back and are printed in file order, so the output does not depend on how many threads ran.
// OOMGUARD_JOBS=N sets the count.
import * as os from 'node:os';
import { Worker, parentPort, workerData } from 'node:worker_threads';
import type { AnalysisOptions } from '../engine/analyze';
import { configureLocale, configuredLocale } from '../l10n';
import { checkFile, ruleErrorReporter, type FileFindings } from './check';

/** Fewer files than this per thread: a thread's start (the parser's WebAssembly, the queries) costs more than it saves. */
const MIN_FILES_PER_WORKER = 8;

export interface CheckJob {
  index: number;
  file: string;
  display: string;
  options: Pick<AnalysisOptions, 'select' | 'ignore' | 'severity'>;
}

export interface CheckOutcome {
  index: number;
  /** Undefined when the file was skipped (the reason is in stderr). */
  result?: FileFindings;
  stderr: string;
}

interface WorkerInput {
  oomguardCheckJobs: CheckJob[];
  /** The queue's counter (CheckQueue), shared by every thread of the run. */
  queue: SharedArrayBuffer;
  /** The locale the main thread's messages are in (--lang, the environment): a thread's findings are in it too. */
  locale?: string;
}

/** The bundled CLI's own file, which a worker thread loads; threads are used only when the CLI runs as that file. */
let workerEntry: string | undefined;

export function allowCheckWorkers(entry: string): void {
  workerEntry = entry;
}

export function isCheckWorker(data: unknown = workerData): boolean {
  return typeof data === 'object' && data !== null && Array.isArray((data as Partial<WorkerInput>).oomguardCheckJobs);
}

export function checkWorkerCount(files: number): number {
  if (!workerEntry) return 1;
  const asked = Number(process.env.OOMGUARD_JOBS);
  const cores = Number.isInteger(asked) && asked > 0 ? asked : os.availableParallelism();
  return Math.max(1, Math.min(cores, Math.floor(files / MIN_FILES_PER_WORKER)));
}

/** The jobs of a run, handed out one at a time to whichever thread asks next (an atomic counter shared by the threads). */
export class CheckQueue {
  private readonly next: Int32Array;

  constructor(readonly buffer: SharedArrayBuffer = new SharedArrayBuffer(4)) {
    this.next = new Int32Array(buffer);
  }

  /** The index of the next job nobody has taken (at least the number of jobs once they are all taken). */
  take(): number {
    return Atomics.add(this.next, 0, 1);
  }
}

/**
 * Starts count-1 threads that take jobs from `queue` until none is left, while the caller takes its own from the same
 * queue with the parser it has already loaded. A thread that fails leaves the job it had taken to the caller
 * (undefined in the outcomes).
 */
export async function checkInWorkers(jobs: CheckJob[], count: number, queue: CheckQueue): Promise<Array<CheckOutcome | undefined>> {
  const outcomes: Array<CheckOutcome | undefined> = new Array(jobs.length).fill(undefined);
  await Promise.all(Array.from({ length: count - 1 }, () => new Promise<void>((resolve) => {
    const input: WorkerInput = { oomguardCheckJobs: jobs, queue: queue.buffer, locale: configuredLocale() };
    const worker = new Worker(workerEntry!, { workerData: input });
    worker.on('message', (outcome: CheckOutcome) => {
      outcomes[outcome.index] = outcome;
    });
    // Whatever a failed thread did not finish is checked again in this thread.
    worker.on('error', () => resolve());
    worker.on('exit', () => resolve());
  })));
  return outcomes;
}

/** A worker thread's side: takes jobs from the run's queue until none is left, and posts each file's outcome. */
export async function runCheckWorker(): Promise<void> {
  const { oomguardCheckJobs: jobs, queue: buffer, locale } = workerData as WorkerInput;
  configureLocale(locale);
  const queue = new CheckQueue(buffer);
  for (let taken = queue.take(); taken < jobs.length; taken = queue.take()) {
    const job = jobs[taken]!;
    let stderr = '';
    const io = { stdout: () => undefined, stderr: (text: string) => void (stderr += text) };
    const options: AnalysisOptions = { ...job.options, onRuleError: ruleErrorReporter(job.display, io) };
    const result = await checkFile(job.file, job.display, options, io);
    const outcome: CheckOutcome = { index: job.index, result, stderr };
    parentPort?.postMessage(outcome);
  }
}
