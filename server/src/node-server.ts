// The language server in Node: `node dist/server.js --stdio` (any LSP client), or over IPC from the VS Code extension.
import { createConnection, ProposedFeatures } from 'vscode-languageserver/node';
import { loadPython } from './engine/parser';
import { setHost } from './host';
import { nodeHost } from './node-host';
import { startServer } from './server';

const host = nodeHost();
setHost(host);
// Compile the grammar's WebAssembly while the client is still sending `initialize`.
void loadPython();
startServer(createConnection(ProposedFeatures.all), host);
