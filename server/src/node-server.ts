// The language server in Node: `node dist/server.js --stdio` (any LSP client), or over IPC from the VS Code extension.
// dist/server.js is the launcher (node-launcher.ts); this module is its bundle, dist/server-main.js.
import * as v8 from 'node:v8';
import { inspect } from 'node:util';
import * as vm from 'node:vm';
import { createConnection, ProposedFeatures, StreamMessageWriter } from 'vscode-languageserver/node';
import type { Connection, MessageReader } from 'vscode-languageserver/node';
import { messageEncoder } from './diagnostics-encoder';
import { loadPython } from './engine/parser';
import { setHost } from './host';
import { nodeHost } from './node-host';
import { estimateWorker } from './node-estimate-worker';
import { startServer } from './server';
import { setServerV8Flags } from './v8-flags';

setServerV8Flags();
/**
 * `gc` of a new context, made at the first collection: a context costs a few milliseconds that a start would spend
 * before its first diagnostics (the flag that gives it `gc` is set from the start, v8-flags.ts).
 */
let gcOfContext: (() => void) | undefined;
const collect = () => (gcOfContext ??= vm.runInNewContext('gc') as () => void)();

/**
 * A full collection, compacting if asked: a plain one frees a closed document's objects but leaves the pages they
 * shared with survivors resident, half empty (ten closed 2,000-line scripts kept 36 MiB of heap pages for 16 MiB of
 * live objects); a compacting one took 370-400 ms of a 5,000-line script's heap here (a plain one 50-90 ms, loaded
 * machine). The flag is set only for this collection, so the flags a code cache is checked against stay the same.
 */
function collectGarbage(compact: boolean): void {
  if (!compact) {
    collect();
    return;
  }
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
/**
 * Over stdio, the messages are written with the server's encoder (diagnostics-encoder.ts: a keystroke's diagnostics
 * from the bytes of those it sent before). The connection is otherwise what createConnection makes of `--stdio`: it
 * ends with its input, and console output goes to the client's log instead of into the protocol's stream.
 */
function stdioConnection(): Connection {
  // A stream as the input, as `--stdio` gives it: createConnection then exits when it ends (its typings pair a stream
  // only with a stream, its code takes either on each side).
  const input: unknown = process.stdin;
  const connection = createConnection(ProposedFeatures.all, input as MessageReader, new StreamMessageWriter(process.stdout, { contentTypeEncoder: messageEncoder }));
  const format = (args: unknown[]) => args.map((arg) => (typeof arg === 'string' ? arg : inspect(arg))).join(' ');
  console.log = (...args: unknown[]) => connection.console.log(format(args));
  console.info = (...args: unknown[]) => connection.console.info(format(args));
  console.debug = (...args: unknown[]) => connection.console.debug(format(args));
  console.warn = (...args: unknown[]) => connection.console.warn(format(args));
  console.error = (...args: unknown[]) => connection.console.error(format(args));
  console.trace = (...args: unknown[]) => connection.console.log(format(args));
  console.dir = (arg: unknown) => connection.console.log(inspect(arg));
  return connection;
}

startServer(process.argv.includes('--stdio') ? stdioConnection() : createConnection(ProposedFeatures.all), host);
