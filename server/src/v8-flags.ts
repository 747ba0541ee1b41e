// The V8 flags of the Node language server. V8 accepts a code cache (code-cache.ts) only under the flags it was
// made with, so the launcher (node-launcher.ts) sets the compile flags before it compiles the server's bundle, and
// the cache is written with the young generation's flag lifted (withCompileFlags).
import * as v8 from 'node:v8';

const COMPILE_FLAGS = [
  // `gc` of a new context (node-server.ts); the server's own context keeps no global `gc`.
  '--expose-gc',
  // Each edit leaves the old text behind in the large-object space, which only a full collection empties; V8
  // starts one when the heap has grown by a factor it picks from its timings. Started from the code cache, the
  // server let it grow further (400 edits of a 5,000-line script: 224-232 MiB resident, 184-198 before the cache);
  // a factor of 1.5 brought it back (190-211 MiB) without a slower start.
  '--heap-growing-percent=50',
];

/**
 * V8 doubles the young generation each time many objects survive a scavenge, as a document's syntax copy and
 * semantic model do while they are built, up to two 16 MiB semi-spaces that stay resident afterwards (a third of the
 * server's memory with one 5,000-line script open). The server keeps the size it reached while its bundle loaded
 * (node-server.ts sets this then): set before the load, the young generation stays at its first 1 MiB, and objects
 * that live a few milliseconds are promoted and kept until a full collection (400 edits of a 5,000-line script left
 * the server at 235 MiB instead of 190).
 */
const KEEP_YOUNG_GENERATION = '--semi-space-growth-factor=1';
/** V8's default, under which the bundle was compiled. */
const GROW_YOUNG_GENERATION = '--semi-space-growth-factor=2';

/** The flags the server's bundle is compiled under (the launcher sets them first). */
export function setCompileFlags(): void {
  for (const flag of COMPILE_FLAGS) v8.setFlagsFromString(flag);
}

/** All of the server's flags, once its bundle has loaded. */
export function setServerV8Flags(): void {
  setCompileFlags();
  v8.setFlagsFromString(KEEP_YOUNG_GENERATION);
}

/** Runs `work` (writing the code cache) under the flags the bundle was compiled with. */
export function withCompileFlags<T>(work: () => T): T {
  v8.setFlagsFromString(GROW_YOUNG_GENERATION);
  try {
    return work();
  } finally {
    v8.setFlagsFromString(KEEP_YOUNG_GENERATION);
  }
}
