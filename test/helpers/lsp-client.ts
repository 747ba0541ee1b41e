// A minimal LSP client for tests and benchmarks: spawns the built server over stdio and speaks JSON-RPC to it.
import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import * as path from 'node:path';
import {
  createProtocolConnection,
  StreamMessageReader,
  StreamMessageWriter,
} from 'vscode-languageserver-protocol/node';
import type { Diagnostic, InitializeResult, ProtocolConnection, PublishDiagnosticsParams } from 'vscode-languageserver-protocol/node';
import { SERVER_NODE_ARGS } from '../../server/src/launch-args';
import { repoRoot } from './analysis';

export interface TestClient {
  connection: ProtocolConnection;
  child: ChildProcessWithoutNullStreams;
  stderr: () => string;
  /** Resolves with the next diagnostics published for `uri` at `version` (or any version if omitted). */
  diagnostics(uri: string, version?: number, timeoutMs?: number): Promise<Diagnostic[]>;
  /** Resolves with the next diagnostics published for `uri`, ignoring what was published before. */
  nextDiagnostics(uri: string, timeoutMs?: number): Promise<Diagnostic[]>;
  close(): Promise<void>;
  /** What the server answered to `initialize` (its capabilities). */
  initializeResult: InitializeResult;
}

export async function startServer(initializationOptions: unknown = {}, capabilities: object = {}): Promise<TestClient> {
  // OOMGUARD_SERVER_PATH runs another build (a benchmark comparing two commits in the same conditions).
  const serverPath = process.env.OOMGUARD_SERVER_PATH ?? path.join(repoRoot, 'dist', 'server.js');
  // Node's flags as the extension gives them; OOMGUARD_SERVER_NODE_ARGS adds others (e.g. --cpu-prof when profiling a
  // benchmark), and OOMGUARD_SERVER_LAUNCH_ARGS replaces the extension's (a benchmark of a build that had none).
  const launchArgs = process.env.OOMGUARD_SERVER_LAUNCH_ARGS?.split(' ').filter(Boolean) ?? SERVER_NODE_ARGS;
  const nodeArgs = [...launchArgs, ...(process.env.OOMGUARD_SERVER_NODE_ARGS?.split(' ').filter(Boolean) ?? [])];
  const child = spawn(process.execPath, [...nodeArgs, serverPath, '--stdio'], { stdio: 'pipe' });
  let errors = '';
  child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
  const connection = createProtocolConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
  const waiting: Array<{ uri: string; version?: number; resolve: (d: Diagnostic[]) => void }> = [];
  const latest = new Map<string, PublishDiagnosticsParams>();
  connection.onNotification('textDocument/publishDiagnostics', (params: PublishDiagnosticsParams) => {
    latest.set(params.uri, params);
    for (let i = waiting.length - 1; i >= 0; i--) {
      const waiter = waiting[i]!;
      if (waiter.uri === params.uri && (waiter.version === undefined || waiter.version === params.version)) {
        waiting.splice(i, 1);
        waiter.resolve(params.diagnostics);
      }
    }
  });
  connection.onRequest('window/showDocument', () => ({ success: true }));
  connection.listen();
  const initializeResult: InitializeResult = await connection.sendRequest('initialize', {
    processId: process.pid,
    rootUri: null,
    capabilities,
    initializationOptions,
  });
  await connection.sendNotification('initialized', {});
  const next = (uri: string, timeoutMs: number, version?: number) =>
    new Promise<Diagnostic[]>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no diagnostics for ${uri} v${version} within ${timeoutMs} ms; stderr: ${errors}`)), timeoutMs);
      waiting.push({ uri, version, resolve: (d) => { clearTimeout(timer); resolve(d); } });
    });
  return {
    connection,
    initializeResult,
    child,
    stderr: () => errors,
    diagnostics(uri, version, timeoutMs = 10_000) {
      const already = latest.get(uri);
      if (already && version !== undefined && already.version === version) return Promise.resolve(already.diagnostics);
      return next(uri, timeoutMs, version);
    },
    nextDiagnostics: (uri: string, timeoutMs = 10_000) => next(uri, timeoutMs),
    async close() {
      await connection.sendRequest('shutdown').catch(() => undefined);
      await connection.sendNotification('exit').catch(() => undefined);
      connection.dispose();
      await new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        const timer = setTimeout(() => { child.kill(); resolve(); }, 2000);
        child.on('exit', () => { clearTimeout(timer); resolve(); });
      });
    },
  };
}
