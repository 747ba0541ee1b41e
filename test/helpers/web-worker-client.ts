// Runs in Chromium (bundled by web-worker-page.ts): starts dist/web/server.js in a web worker the way the browser
// client does (the two .wasm files as the first message, then LSP over postMessage with vscode-jsonrpc's browser
// transport), and gives the page's caller a small LSP client. Times are measured here, inside the page.
import { BrowserMessageReader, BrowserMessageWriter, createProtocolConnection } from 'vscode-languageserver-protocol/browser';
import type { Diagnostic, ProtocolConnection, PublishDiagnosticsParams } from 'vscode-languageserver-protocol/browser';
import type { WorkerStartMessage } from '../../server/src/protocol';

export interface ColdStart {
  /** From before the .wasm files are fetched and the worker is made to the first diagnostics of the document. */
  coldMs: number;
  /** The part of coldMs until `initialize` was answered (worker start, script evaluation). */
  initializeMs: number;
  diagnostics: Diagnostic[];
}

export interface WorkerClient {
  /** Starts a fresh worker server, opens `text` as `uri` and waits for its first diagnostics. */
  coldStart(uri: string, text: string, initializationOptions?: unknown): Promise<ColdStart>;
  request(method: string, params: unknown): Promise<unknown>;
  notify(method: string, params: unknown): Promise<void>;
  /** The next diagnostics published for `uri` at `version`. */
  diagnostics(uri: string, version: number): Promise<Diagnostic[]>;
  /** What the worker logged through window/logMessage and the errors it raised. */
  log(): string[];
  stop(): void;
}

declare global {
  interface Window {
    oomguardWorker: WorkerClient;
  }
}

let worker: Worker | undefined;
let connection: ProtocolConnection | undefined;
const waiting: Array<{ uri: string; version: number; resolve: (diagnostics: Diagnostic[]) => void }> = [];
const published = new Map<string, PublishDiagnosticsParams>();
const logged: string[] = [];

function connected(): ProtocolConnection {
  if (!connection) throw new Error('no worker server: call coldStart first');
  return connection;
}

async function bytes(url: string): Promise<Uint8Array> {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

function diagnostics(uri: string, version: number): Promise<Diagnostic[]> {
  const already = published.get(uri);
  if (already && already.version === version) return Promise.resolve(already.diagnostics);
  return new Promise((resolve) => waiting.push({ uri, version, resolve }));
}

window.oomguardWorker = {
  async coldStart(uri, text, initializationOptions = {}) {
    const started = performance.now();
    const [treeSitterWasm, pythonWasm] = await Promise.all([bytes('/dist/tree-sitter.wasm'), bytes('/dist/tree-sitter-python.wasm')]);
    worker = new Worker('/dist/web/server.js');
    worker.addEventListener('error', (event) => logged.push(`worker error: ${event.message}`));
    const start: WorkerStartMessage = { type: 'oomguard/start', treeSitterWasm, pythonWasm };
    worker.postMessage(start);
    connection = createProtocolConnection(new BrowserMessageReader(worker), new BrowserMessageWriter(worker));
    connection.onNotification('textDocument/publishDiagnostics', (params: PublishDiagnosticsParams) => {
      published.set(params.uri, params);
      for (let i = waiting.length - 1; i >= 0; i--) {
        const waiter = waiting[i]!;
        if (waiter.uri === params.uri && waiter.version === params.version) {
          waiting.splice(i, 1);
          waiter.resolve(params.diagnostics);
        }
      }
    });
    connection.onNotification('window/logMessage', (params: { message: string }) => {
      logged.push(params.message);
    });
    connection.onRequest('workspace/configuration', () => []);
    connection.onRequest('oomguard/findPyproject', () => null);
    connection.listen();
    await connection.sendRequest('initialize', { processId: null, rootUri: null, capabilities: {}, initializationOptions });
    const initializeMs = performance.now() - started;
    await connection.sendNotification('initialized', {});
    const first = diagnostics(uri, 1);
    await connection.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'python', version: 1, text } });
    const result = await first;
    return { coldMs: performance.now() - started, initializeMs, diagnostics: result };
  },
  request: (method, params) => connected().sendRequest(method, params),
  notify: (method, params) => connected().sendNotification(method, params),
  diagnostics,
  log: () => [...logged],
  stop() {
    connection?.dispose();
    worker?.terminate();
    connection = undefined;
    worker = undefined;
    published.clear();
  },
};
