// The extension in a browser's extension host (VS Code for the Web: vscode.dev, github.dev, Codespaces and
// code-server in a browser). The language server is the same engine, bundled for a web worker (dist/web/server.js).
import * as vscode from 'vscode';
import { BrowserMessageReader, BrowserMessageWriter, LanguageClient } from 'vscode-languageclient/browser';
import type { MessageTransports } from 'vscode-languageclient/browser';
import { FIND_PYPROJECT_REQUEST } from '../../../server/src/protocol';
import type { FindPyprojectParams, FindPyprojectResult, WorkerStartMessage } from '../../../server/src/protocol';
import { activateWith, deactivate } from '../client';
import { serveSchemes } from '../served';

export { deactivate };

/**
 * Starts the server's worker. Its script and the two .wasm files are read from the extension's own URI through
 * VS Code's file system, which reaches an extension wherever it is served from (a CDN on vscode.dev, the remote
 * on Codespaces and code-server, where VS Code refuses `new Worker(<extension URI>)`); the worker is made from the
 * script's bytes, and the .wasm files are its first message. The transports are made here because the client
 * would not recognise the worker: VS Code's extension host wraps the Worker class, so `instanceof Worker` fails.
 */
let running: Worker | undefined;

async function startWorker(context: vscode.ExtensionContext): Promise<MessageTransports> {
  // A restart: the previous server's worker goes.
  running?.terminate();
  const dist = vscode.Uri.joinPath(context.extensionUri, 'dist');
  const [script, treeSitterWasm, pythonWasm] = await Promise.all(
    [['web', 'server.js'], ['tree-sitter.wasm'], ['tree-sitter-python.wasm']].map((parts) => vscode.workspace.fs.readFile(vscode.Uri.joinPath(dist, ...parts))),
  );
  const worker = new Worker(URL.createObjectURL(new Blob([script as Uint8Array<ArrayBuffer>], { type: 'text/javascript' })));
  const start: WorkerStartMessage = { type: 'oomguard/start', treeSitterWasm: treeSitterWasm!, pythonWasm: pythonWasm! };
  worker.postMessage(start);
  running = worker;
  return { reader: new BrowserMessageReader(worker), writer: new BrowserMessageWriter(worker) };
}

/** The nearest pyproject.toml at or above a document's folder, read through VS Code's file system. */
async function findPyproject({ uri }: FindPyprojectParams): Promise<FindPyprojectResult> {
  let folder = vscode.Uri.joinPath(vscode.Uri.parse(uri), '..');
  for (;;) {
    const candidate = vscode.Uri.joinPath(folder, 'pyproject.toml');
    try {
      const stat = await vscode.workspace.fs.stat(candidate);
      if (stat.type & vscode.FileType.File) {
        return { uri: candidate.toString(), text: new TextDecoder('utf-8').decode(await vscode.workspace.fs.readFile(candidate)) };
      }
    } catch {
      // Not there (or not readable): look in the folder above.
    }
    const parent = vscode.Uri.joinPath(folder, '..');
    if (parent.path === folder.path) return null;
    folder = parent;
  }
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  // The schemes of web workspaces: vscode-vfs: on github.dev and vscode.dev, vscode-remote: in Codespaces and
  // code-server, vscode-test-web: and memfs: memory file systems, file: (a local folder opened on vscode.dev), and
  // unsaved documents. Not git: and other schemes of read-only views such as diffs (the Node client reads none either).
  serveSchemes(['file', 'untitled', 'vscode-vfs', 'vscode-remote', 'vscode-test-web', 'memfs']);
  await activateWith(context, async (context, options, name) => {
    // A function, so that a restart of the server starts a fresh worker.
    const client = new LanguageClient('oomguard', name, () => startWorker(context), {
      ...options,
      // The server caches what findPyproject answered until a pyproject.toml changes.
      synchronize: { ...options.synchronize, fileEvents: vscode.workspace.createFileSystemWatcher('**/pyproject.toml') },
    });
    client.onRequest(FIND_PYPROJECT_REQUEST, findPyproject);
    return client;
  }, () => ({ server: vscode.Uri.joinPath(context.extensionUri, 'dist', 'web', 'server.js').toString(), runtime: vscode.l10n.t('a web worker of the browser') }));
}
