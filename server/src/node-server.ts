// The language server in Node: `node dist/server.js --stdio` (any LSP client), or over IPC from the VS Code extension.
// dist/server.js is the launcher (node-launcher.ts); this module is its bundle, dist/server-main.js.
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import { createConnection, ProposedFeatures } from 'vscode-languageserver/node';
import { loadPython } from './engine/parser';
import { setHost } from './host';
import { nodeHost } from './node-host';
import { estimateWorker } from './node-estimate-worker';
import { startServer } from './server';
import { setServerV8Flags } from './v8-flags';

setServerV8Flags();
const collect = vm.runInNewContext('gc') as () => void;

/**
 * A full collection that also compacts: a plain one frees a closed document's objects but leaves the pages they
 * shared with survivors resident, half empty (ten closed 2,000-line scripts kept 36 MiB of heap pages for 16 MiB of
 * live objects). The flag is set only for this collection, so the flags a code cache is checked against stay the same.
 */
function collectGarbage(): void {
  v8.setFlagsFromString('--compact-on-every-full-gc');
  try {
    collect();
  } finally {
    v8.setFlagsFromString('--no-compact-on-every-full-gc');
  }
}

const host = { ...nodeHost(), collectGarbage, estimateWorker: estimateWorker() };
setHost(host);
// Compile the grammar's WebAssembly while the client is still sending `initialize`.
void loadPython();
startServer(createConnection(ProposedFeatures.all), host);
