// The language server in Node: `node dist/server.js --stdio` (any LSP client), or over IPC from the VS Code extension.
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import { createConnection, ProposedFeatures } from 'vscode-languageserver/node';
import { loadPython } from './engine/parser';
import { setHost } from './host';
import { nodeHost } from './node-host';
import { startServer } from './server';

// V8 doubles the young generation each time many objects survive a scavenge, as a document's syntax copy and
// semantic model do while they are built, up to two 16 MiB semi-spaces that stay resident afterwards (a third of the
// server's memory with one 5,000-line script open). A server that idles between edits keeps it at its first size:
// a few more scavenges, about 30 MiB less resident memory.
v8.setFlagsFromString('--semi-space-growth-factor=1');

// `gc` of a new context, once the flag allows it (the server's own context keeps no global `gc`).
v8.setFlagsFromString('--expose-gc');
const collectGarbage = vm.runInNewContext('gc') as () => void;

const host = { ...nodeHost(), collectGarbage };
setHost(host);
// Compile the grammar's WebAssembly while the client is still sending `initialize`.
void loadPython();
startServer(createConnection(ProposedFeatures.all), host);
