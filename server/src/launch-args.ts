// The Node flags and the environment the language server is started with (the VS Code extension's launch, and the
// tests and benchmarks that start it as the extension does). All must be given as the process starts: none can be set
// once it runs. An editor that starts `node dist/server.js --stdio` without them gets a server that works the same,
// with more resident memory.
export const SERVER_NODE_ARGS: readonly string[] = [
  // Two threads for V8's background work (concurrent marking, sweeping, optimizing compiles) instead of four: each
  // thread keeps a malloc arena of what it once allocated. A 5,000-line script after its first edit: 111 MiB resident
  // instead of 117 (medians of 4, same minutes). One thread saved 12 MiB, but the estimate worker's own background work
  // then queued before the server's: the first edit after the open took 388 ms instead of 117 (medians of 4).
  '--v8-pool-size=2',
  // The young generation's semi-spaces at most the 4 MiB the server keeps them at (v8-flags.ts): starting the estimate
  // worker's heap sets V8's growth factor back to its default for the whole process, and the server's young
  // generation grew to 16 or 32 MiB, resident for good. With ten 2,000-line scripts open: 144 MiB instead of 152 (one
  // run each, both with one background thread).
  '--max-semi-space-size=4',
];

/**
 * glibc's malloc (Linux) raises the size from which it maps a freed block's memory on its own, up to 32 MiB, each time
 * such a block is freed. The server then took its large buffers (the estimate worker's, off-heap tables, messages)
 * from heaps that keep freed memory resident. A fixed threshold of 1 MiB (`npm run bench`, runs alternated with the
 * default, loaded machine): a 5,000-line script settled at 104-105 MiB after the edits instead of 107-111, ten
 * 2,000-line scripts at 126-130 instead of 130-137 (closed again: 82-85 instead of 84-89), a 20,000-line script at 128
 * instead of 140, its estimate's peak 232 instead of 257. 128 KiB (glibc's start) saved 5-8 MiB more, but mapped and
 * unmapped buffers on every keystroke: two to three times the page faults, 0.8 ms more server CPU per edit (means of
 * three alternated runs of 640 edits of a 5,000-line script).
 */
const MALLOC_TUNABLE = 'glibc.malloc.mmap_threshold=1048576';

/** The variables the server is started with, beside the environment it inherits: glibc reads them as a process starts. */
export function serverEnvironment(inherited: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const tunables = inherited.GLIBC_TUNABLES;
  // The user's own malloc settings stand.
  if (tunables?.includes('glibc.malloc.mmap_threshold')) return {};
  return { GLIBC_TUNABLES: tunables ? `${tunables}:${MALLOC_TUNABLE}` : MALLOC_TUNABLE };
}
