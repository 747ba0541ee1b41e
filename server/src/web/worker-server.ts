// The language server in a browser's web worker (VS Code for the Web). The client posts the two .wasm files first
// (WorkerStartMessage), then speaks LSP over postMessage; the server is server.ts, as in Node.
import { BrowserMessageReader, BrowserMessageWriter, createConnection } from 'vscode-languageserver/browser';
import { loadPython } from '../engine/parser';
import { setHost } from '../host';
import type { WorkerStartMessage } from '../protocol';
import { startServer } from '../server';
import { webHost } from './web-host';

/** The worker's global scope, as far as this file uses it (the Node typings of this build do not declare it). */
interface WorkerScope {
  addEventListener(type: 'message', listener: (event: MessageEvent<unknown>) => void): void;
  removeEventListener(type: 'message', listener: (event: MessageEvent<unknown>) => void): void;
  postMessage(message: unknown): void;
}
declare const self: WorkerScope;

function isStartMessage(data: unknown): data is WorkerStartMessage {
  const message = data as Partial<WorkerStartMessage> | undefined;
  return message?.type === 'oomguard/start' && message.treeSitterWasm instanceof Uint8Array && message.pythonWasm instanceof Uint8Array;
}

const onStart = (event: MessageEvent<unknown>) => {
  if (!isStartMessage(event.data)) return;
  self.removeEventListener('message', onStart);
  // The reader listens from here on: the LSP messages the client posts after the start message reach it in order.
  const connection = createConnection(new BrowserMessageReader(self), new BrowserMessageWriter(self));
  const host = webHost(connection, { 'tree-sitter.wasm': event.data.treeSitterWasm, 'tree-sitter-python.wasm': event.data.pythonWasm });
  setHost(host);
  // Compile the grammar's WebAssembly while the client is still sending `initialize`.
  void loadPython();
  startServer(connection, host);
};
self.addEventListener('message', onStart);
