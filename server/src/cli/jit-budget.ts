// How much of V8's optimising JavaScript compiler (TurboFan) a run of `oomguard check` asks for. TurboFan compiles
// hot functions on V8's background threads, each function anew in every thread's isolate; with the default budgets
// it took 1.1-1.2 s of CPU beside the analysis thread's 2.0 s on the 200-script corpus, and 1.6-1.7 of 4.5 s with
// two threads (per thread, from /proc/self/task, alternated runs); most of it inlines (without inlining: a third less).
// Where the run's threads fill the machine's cores, that compilation takes a core from the analysis instead of using
// one left idle. With inlining capped at a quarter of the default's bytecode and functions optimised after four times
// the default's work, two threads took 3.8 s of CPU instead of 4.7 (background threads 0.8 instead of 1.7 s; the
// analysis threads the same), and one thread 3.0 instead of 3.2 s, but 9% more on its own thread (2.1 instead of
// 2.0 s): with a spare core, V8's defaults are kept. The language server lives long and keeps V8's defaults.
import * as os from 'node:os';
import * as v8 from 'node:v8';

const LESS_OPTIMISATION = [
  // Bytecode inlined into one optimised function, in all (V8's default: 920).
  '--max-inlined-bytecode-size-cumulative=230',
  // Work a function does before it is optimised (V8's default: 67,584, 66 KB of bytecode run).
  '--interrupt-budget=270336',
];

/** Optimises less when `threads` analysis threads leave no core to V8's background compiler (see the header). */
export function chooseJitBudget(threads: number): void {
  if (threads < os.availableParallelism()) return;
  for (const flag of LESS_OPTIMISATION) v8.setFlagsFromString(flag);
}
