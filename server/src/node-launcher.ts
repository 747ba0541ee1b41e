// dist/server.js, what an editor starts (`node dist/server.js --stdio`, or the VS Code extension over IPC): runs
// the server's bundle (node-server.ts, dist/server-main.js) from a V8 code cache (code-cache.ts), which saves its
// compilation on every start after the first, under the flags it is compiled with (v8-flags.ts).
import * as path from 'node:path';
import { runBundleWithCodeCache, userCacheFolder } from './code-cache';
import type { BundleDigest } from './code-cache';
import { setCompileFlags, withCompileFlags } from './v8-flags';

/** dist/server-main.js's digest, written into this bundle by scripts/build.mjs (absent in a build without it). */
declare const SERVER_MAIN_DIGEST: BundleDigest | undefined;

setCompileFlags();
runBundleWithCodeCache(path.join(__dirname, 'server-main.js'), userCacheFolder(), withCompileFlags,
  typeof SERVER_MAIN_DIGEST === 'undefined' ? undefined : SERVER_MAIN_DIGEST);
