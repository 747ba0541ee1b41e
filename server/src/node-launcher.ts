// dist/server.js, what an editor starts (`node dist/server.js --stdio`, or the VS Code extension over IPC): runs
// the server's bundle (node-server.ts, dist/server-main.js) from a V8 code cache (code-cache.ts), which saves its
// compilation on every start after the first, under the flags it is compiled with (v8-flags.ts).
import * as path from 'node:path';
import { runBundleWithCodeCache, userCacheFolder } from './code-cache';
import { setCompileFlags, withCompileFlags } from './v8-flags';

setCompileFlags();
runBundleWithCodeCache(path.join(__dirname, 'server-main.js'), userCacheFolder(), withCompileFlags);
