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

// Not set: a fixed malloc mmap threshold (GLIBC_TUNABLES=glibc.malloc.mmap_threshold=1048576, measured
// and left out). It saved 4-12 MiB of settled RSS, but at 20,000 lines every keystroke's buffers over the threshold were
// mapped and unmapped again: edit-to-diagnostics p50 16-21 ms instead of 8-11 (npm run bench, same minutes, load
// about 1; 4 MiB gave the same 16-20 ms). The memory targets hold without it.
