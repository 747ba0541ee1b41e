// What differs between the places the one engine runs: Node (the stdio/IPC language server, the CLI, the tests)
// and a browser's web worker (VS Code for the Web). Everything else, from parsing to code actions, is the same code.
// An entry point sets its host once at startup (setHost); code that runs without one (the CLI, the tests) gets
// Node's, which scripts/build.mjs leaves out of the worker bundle.
import type { ProjectConfig } from './config/pyproject';
import type { LocalGpuQuery } from './features/nvidia-smi';
import type { EstimateWorker } from './node-estimate-worker';
import { nodeHost } from './node-host';

/** A .wasm file the server loads: where Node finds it on disk, or its bytes as the browser client read them. */
export type WasmSource = string | Uint8Array;

export type WasmFile = 'tree-sitter.wasm' | 'tree-sitter-python.wasm';

export interface Host {
  /** `node` has a disk and processes; `browser` has neither (what a user is told it cannot do says so). */
  readonly kind: 'node' | 'browser';
  /** One of the two .wasm files web-tree-sitter needs. */
  wasm(file: WasmFile): WasmSource;
  /** The source of a shipped tree-sitter query (`retain-graph-in-loop`), or undefined if none has that name. */
  querySource(name: string): string | undefined;
  /** The names of every shipped query. */
  queryNames(): string[];
  /** The translations of one l10n bundle (`zh-cn` for l10n/bundle.l10n.zh-cn.json), if it ships. */
  l10nBundle(name: string): Record<string, string> | undefined;
  /**
   * A file of this machine's disk, read synchronously (a config file a script loads, a model folder's config.json,
   * a traceback's script): undefined when it is missing, not a file, larger than `maxBytes`, or there is no disk.
   */
  readLocalFile(file: string, maxBytes?: number): string | undefined;
  /** Whether `file` is a file of this machine's disk. */
  isLocalFile(file: string): boolean;
  /** The folder relative names resolve against when no script folder has them (the CLI's working directory). */
  workingDirectory(): string | undefined;
  /**
   * `[tool.oomguard]` of the pyproject.toml nearest to a document, by URI; undefined when it has none or none can
   * be looked for. Asynchronous: in a browser the editor reads the workspace's files.
   */
  projectConfig(uri: string): Promise<ProjectConfig | undefined>;
  /** The local GPUs and their free memory (`nvidia-smi`), or why there are none (a browser has no process to run). */
  localGpus(command: string): Promise<LocalGpuQuery>;
  /**
   * Collects garbage now, where the runtime allows it (the Node server). A closed document's tree copy, model and
   * findings are unreachable at once, but a server that idles allocates nothing that would collect them.
   * `compact`: the surviving objects are also moved together, so that the pages that held the dead ones go back
   * (several times slower: for documents closed, not for the garbage of edits).
   */
  collectGarbage?(compact: boolean): void;
  /**
   * Where the memory estimate of the diagnostics runs off the thread that answers the editor (the Node server: a
   * worker thread); without one it runs on that thread, between other work.
   */
  readonly estimateWorker?: EstimateWorker;
}

let current: Host | undefined;

/** Called once by an entry point before the engine runs. */
export function setHost(next: Host): void {
  current = next;
}

/** The host this process runs on. */
export function host(): Host {
  current ??= nodeHost();
  return current;
}
