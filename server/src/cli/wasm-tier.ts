// Which of V8's WebAssembly compilers runs tree-sitter in a run of the CLI. V8 first compiles each function with its
// baseline compiler (Liftoff), then recompiles the hot ones (the parser, the grammar's lexer, the tree cursor the
// copy walks with) with its optimising compiler (TurboFan). For a process that parses a few thousand lines and
// exits, that recompilation costs more than it saves: 130-190 ms of CPU and 4,000-7,000 page faults (16-28 MB of
// compiler memory mapped for the first time) at the first parse, against a parse 1.4 times as fast afterwards (8.5
// instead of 12 us a line). Measured on `oomguard check` (alternated runs, CPU medians): 10,000 appends (250 KB)
// 1.49 -> 1.28 s, 50 scripts (490 KB) 1.86 -> 1.54 s, but 100 scripts (1 MB) 2.58 -> 2.92 s, where the copy's
// cursor walks and the queries ran long enough to repay it. The language server lives long and keeps V8's default.
import * as fs from 'node:fs';
import * as v8 from 'node:v8';
import { pythonLoadStarted } from '../engine/parser';

/** Bytes of input up to which the CLI keeps tree-sitter on the baseline compiler (about 15,000 lines; see the header). */
export const BASELINE_WASM_MAX_BYTES = 500_000;

/**
 * Keeps tree-sitter on V8's baseline compiler when the files to read are small enough (see the header), in a process
 * that has not loaded it yet (V8 reads the flag as it compiles a function and when it would tier one up; a process
 * that ran `main` before, as the tests do, keeps what it had).
 */
export function chooseWasmTier(files: readonly string[]): void {
  if (pythonLoadStarted()) return;
  let total = 0;
  for (const file of files) {
    try {
      total += fs.statSync(file).size;
    } catch {
      // An unreadable file is reported when it is read; it parses nothing.
    }
    if (total > BASELINE_WASM_MAX_BYTES) return;
  }
  v8.setFlagsFromString('--liftoff-only');
}
