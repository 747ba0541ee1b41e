// The Node flags the language server is started with (the VS Code extension's launch, and the tests and benchmarks
// that start it as the extension does). Both must be given on node's command line: neither can be set once the
// process runs. An editor that starts `node dist/server.js --stdio` without them gets a server that works the same,
// with more resident memory.
export const SERVER_NODE_ARGS: readonly string[] = [
  // One thread for V8's background work (concurrent marking, sweeping, optimizing compiles) instead of four: each
  // thread keeps a malloc arena of what it once allocated. Ten 2,000-line scripts opened, then closed: 152 and 99 MiB
  // resident instead of 164 and 111 (one run each, same minutes).
  '--v8-pool-size=1',
  // The young generation's semi-spaces at most the 4 MiB the server keeps them at (v8-flags.ts): starting the estimate
  // worker's heap sets V8's growth factor back to its default for the whole process, and the server's young
  // generation grew to 16 or 32 MiB, resident for good. With ten 2,000-line scripts open: 144 MiB instead of 152 (one
  // run each).
  '--max-semi-space-size=4',
];
