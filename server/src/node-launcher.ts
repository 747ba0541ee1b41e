// dist/server.js, what an editor starts (`node dist/server.js --stdio`, or the VS Code extension over IPC): sets
// the server's V8 flags, then runs the server's bundle (node-server.ts, dist/server-main.js) from a V8 code cache
// (code-cache.ts), which saves its compilation on every start after the first.
import * as path from 'node:path';
import { runBundleWithCodeCache, userCacheFolder } from './code-cache';
import { setServerV8Flags } from './v8-flags';

setServerV8Flags();
runBundleWithCodeCache(path.join(__dirname, 'server-main.js'), userCacheFolder());
