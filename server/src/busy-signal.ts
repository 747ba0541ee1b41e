// How the Node server's thread tells the memory estimate's worker (estimate-worker.ts) that it has diagnostics to
// compute: one integer in memory both threads share. The worker looks at it between steps of its estimate (and while
// tree-sitter parses) and waits while the server is busy, so that an estimate never competes with the diagnostics of
// an edit for the CPU: on a machine with two cores, the estimate of a 20,000-line script (a parse and a copy of
// 0.5-1 s there, and the estimate) ran through the first edits after an open, and through every edit of a long burst
// of typing once the last estimate had been asked for.

/** Values of the shared integer. */
const IDLE = 0;
const BUSY = 1;

export class BusySignal {
  private readonly state: Int32Array;

  /** A new signal, or the worker's view of the server's (the buffer it was handed). */
  constructor(readonly buffer: SharedArrayBuffer = new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT)) {
    this.state = new Int32Array(buffer);
  }

  /** The server's side: whether it has an analysis queued or running (waking a worker that waits on it). */
  set(busy: boolean): void {
    const value = busy ? BUSY : IDLE;
    if (Atomics.exchange(this.state, 0, value) !== value) Atomics.notify(this.state, 0);
  }

  /**
   * The worker's side, between two steps of its work: returns at once while the server is idle; while it is busy,
   * blocks this thread until the server has been idle for `graceMs` (the pause between two keystrokes, so that the
   * worker does not start a step that the next keystroke's analysis would have to share the CPU with), and never
   * past `deadline` (a Date.now() time: sizes asked during a long burst of typing still come).
   */
  waitWhileBusy(graceMs: number, deadline: number): void {
    if (Atomics.load(this.state, 0) === IDLE) return;
    for (;;) {
      const left = deadline - Date.now();
      if (left <= 0) return;
      if (Atomics.load(this.state, 0) === BUSY) {
        Atomics.wait(this.state, 0, BUSY, left);
        continue;
      }
      // Idle again: busy again within the grace (the next keystroke) waits once more.
      if (Atomics.wait(this.state, 0, IDLE, Math.min(graceMs, left)) === 'timed-out') return;
    }
  }
}
