// The engine's host in Node: the files the extension ships are read from dist/ (or from the source tree when the
// tests run from source), a script's own files from the disk. Left out of the web worker's bundle.
import type * as ChildProcess from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigLoader } from './config/pyproject-files';
import type { Host, WasmFile } from './host';
import { parseNvidiaSmi, type LocalGpuQuery } from './features/nvidia-smi';
import { t } from './l10n';

/**
 * node:child_process, loaded when nvidia-smi is first asked for: loaded with the bundle (and the net and stream
 * modules it loads), it cost every start of the CLI, of each of its worker threads and of the server a few
 * milliseconds for a question few runs ask.
 */
let childProcess: typeof ChildProcess | undefined;

function loadChildProcess(): typeof ChildProcess {
  return (childProcess ??= require('node:child_process') as typeof ChildProcess);
}

/** Finds a file that the bundle ships beside itself (dist/) or that node_modules holds (tests run from source). */
function locateWasm(fileName: WasmFile): string {
  const shipped = path.join(__dirname, fileName);
  if (fs.existsSync(shipped)) return shipped;
  // Running from source (tests): the package in node_modules. Its package.json may not be exported, so
  // resolve its entry point and walk up to the folder that holds the file.
  const packageName = fileName === 'tree-sitter.wasm' ? 'web-tree-sitter' : 'tree-sitter-python';
  let dir = path.dirname(require.resolve(packageName, { paths: [__dirname, process.cwd()] }));
  while (!fs.existsSync(path.join(dir, fileName)) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  return path.join(dir, fileName);
}

/** dist/queries/ beside the bundle, or the rules' queries in the source tree. */
const QUERY_DIRS = [path.join(__dirname, 'queries'), path.join(__dirname, 'rules', 'queries')];
/** l10n/ beside dist/ (the .vsix and the npm package), or at the repository root (source). */
const L10N_DIRS = [path.join(__dirname, '..', 'l10n'), path.join(__dirname, '..', '..', 'l10n')];

function readIfFile(file: string, maxBytes = Infinity): string | undefined {
  try {
    // Most files asked for are missing (the program model looks for a settings module beside the script for every
    // import): answered without an exception, whose stack trace cost more than the stat (0.6 ms an estimate).
    const stat = fs.statSync(file, { throwIfNoEntry: false });
    if (!stat?.isFile() || stat.size > maxBytes) return undefined;
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

export function nodeHost(): Host {
  // In an editor a pyproject.toml changes while the server runs: look it up for every analysis (a stat).
  const configs = new ConfigLoader(false);
  return {
    kind: 'node',
    localGpus: (command) => new Promise<LocalGpuQuery>((resolve) => {
      loadChildProcess().execFile(command, ['--query-gpu=index,name,memory.total,memory.free', '--format=csv,noheader,nounits'], { timeout: 5000 }, (error, stdout) => {
        if (error) {
          const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
          resolve({ error: missing ? t('nvidia-smi was not found on this machine') : t('nvidia-smi failed: {0}', error.message.split('\n')[0] ?? '') });
          return;
        }
        const gpus = parseNvidiaSmi(stdout);
        resolve(gpus.length > 0 ? { gpus } : { error: t('nvidia-smi listed no GPU') });
      });
    }),
    // The bytes rather than the path: web-tree-sitter reads a path with a dynamic import(), which code that Node 20
    // runs from a V8 code cache (code-cache.ts) cannot make.
    wasm: (file) => fs.readFileSync(locateWasm(file)),
    querySource: (name) => {
      for (const dir of QUERY_DIRS) {
        const text = readIfFile(path.join(dir, `${name}.scm`));
        if (text !== undefined) return text;
      }
      return undefined;
    },
    queryNames: () => {
      for (const dir of QUERY_DIRS) {
        if (fs.existsSync(dir)) return fs.readdirSync(dir).filter((f) => f.endsWith('.scm')).map((f) => f.slice(0, -4)).sort();
      }
      return [];
    },
    l10nBundle: (name) => {
      for (const dir of L10N_DIRS) {
        const text = readIfFile(path.join(dir, `bundle.l10n.${name}.json`));
        if (text === undefined) continue;
        try {
          return JSON.parse(text) as Record<string, string>;
        } catch {
          return undefined;
        }
      }
      return undefined;
    },
    readLocalFile: readIfFile,
    isLocalFile: (file) => {
      try {
        return fs.statSync(file).isFile();
      } catch {
        return false;
      }
    },
    workingDirectory: () => process.cwd(),
    projectConfig: async (uri) => {
      // Unsaved (untitled:) and remote documents have no pyproject.toml on this disk.
      if (!uri.startsWith('file:')) return undefined;
      try {
        return configs.forFile(fileURLToPath(uri));
      } catch {
        return undefined;
      }
    },
  };
}
