// The engine's host in a browser's web worker (VS Code for the Web: vscode.dev, github.dev, Codespaces and
// code-server in a browser). There is no disk and no process: the .wasm files come from the client, which read
// them from the extension's own URI; the queries and translations are inside the worker's bundle; pyproject.toml
// is read through the editor's file system; files a script names on disk cannot be read.
import * as path from 'path-browserify';
import type { Connection } from 'vscode-languageserver';
import { l10n as shippedL10n, queries as shippedQueries } from 'oomguard:shipped';
import { parsePyproject } from '../config/pyproject';
import type { ProjectConfig } from '../config/pyproject';
import type { Host, WasmFile } from '../host';
import { t } from '../l10n';
import { FIND_PYPROJECT_REQUEST } from '../protocol';
import type { FindPyprojectParams, FindPyprojectResult } from '../protocol';

/** A URI's path (decoded), which per-file-ignores globs are matched against; undefined if it is not a URI. */
function uriPath(uri: string): string | undefined {
  try {
    return decodeURIComponent(new URL(uri).pathname);
  } catch {
    return undefined;
  }
}

export function webHost(connection: Connection, wasm: Record<WasmFile, Uint8Array>): Host {
  /** Per document folder, the answer of the client (cleared when a pyproject.toml changes). */
  const found = new Map<string, Promise<FindPyprojectResult>>();
  connection.onDidChangeWatchedFiles(() => found.clear());
  return {
    kind: 'browser',
    wasm: (file) => wasm[file],
    querySource: (name) => shippedQueries[name],
    queryNames: () => Object.keys(shippedQueries).sort(),
    l10nBundle: (name) => shippedL10n[name],
    readLocalFile: () => undefined,
    isLocalFile: () => false,
    workingDirectory: () => undefined,
    localGpus: async () => ({ error: t('VS Code for the Web cannot run nvidia-smi: choose a GPU from the list, or "custom" with oomguard.customGpuMemory') }),
    projectConfig: async (uri): Promise<ProjectConfig | undefined> => {
      const document = uriPath(uri);
      // Unsaved (untitled:) documents have no folder to look in.
      if (!document || uri.startsWith('untitled:')) return undefined;
      const folder = uri.slice(0, uri.lastIndexOf('/'));
      let pending = found.get(folder);
      if (!pending) {
        const params: FindPyprojectParams = { uri };
        pending = connection.sendRequest<FindPyprojectResult>(FIND_PYPROJECT_REQUEST, params).catch(() => null);
        found.set(folder, pending);
      }
      const result = await pending;
      const pyprojectPath = result ? uriPath(result.uri) : undefined;
      if (!result || !pyprojectPath) return { document, root: path.dirname(document), config: {} };
      return { file: result.uri, document, root: path.dirname(pyprojectPath), ...parsePyproject(result.text, result.uri) };
    },
  };
}
