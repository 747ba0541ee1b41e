// Runs a CommonJS bundle from a V8 code cache: the bytecode of the functions an earlier run compiled, kept in the
// user's cache folder. Without it every start compiles the 1.6 MB server bundle again, and each function the first
// analysis calls on its first call. The cache only ever saves time: one that is missing, unreadable, made by
// another V8 or under other flags (V8 checks and rejects it) means a compile from source and a new cache; one that
// cannot be written is not written.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import Module from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import * as vm from 'node:vm';

/** How long after the start the cache is written: by then the first documents are analysed, their functions compiled. */
const WRITE_CACHE_AFTER_MS = 10_000;
/**
 * Writing the cache stops the server for 100-250 ms (V8 serialises every compiled function): it waits for a moment
 * when the server is idle (busy less than this share of the last check's interval), not to land among keystrokes...
 */
const IDLE_UTILIZATION = 0.05;
const IDLE_CHECK_MS = 250;
/** ...unless the server never rests: then it is written this long after the start. */
const WRITE_CACHE_AT_LATEST_MS = 60_000;
/** Caches of other builds (or other V8s) kept beside this one's: an update leaves no pile behind. */
const OTHER_CACHES_KEPT = 3;

/**
 * This user's cache folder for OOM Guard: OOMGUARD_CODE_CACHE_DIR when set (empty: no cache), else the platform's
 * per-user cache folder. Never a shared folder such as /tmp: code read from it would run as this user.
 */
export function userCacheFolder(): string | undefined {
  const chosen = process.env.OOMGUARD_CODE_CACHE_DIR;
  if (chosen !== undefined) return chosen === '' ? undefined : chosen;
  let home: string;
  try {
    home = os.homedir();
  } catch {
    return undefined;
  }
  if (!home) return undefined;
  if (process.platform === 'win32') return path.join(process.env.LOCALAPPDATA || path.join(home, 'AppData', 'Local'), 'oomguard', 'Cache');
  if (process.platform === 'darwin') return path.join(home, 'Library', 'Caches', 'oomguard');
  return path.join(process.env.XDG_CACHE_HOME || path.join(home, '.cache'), 'oomguard');
}

/**
 * The cache file of a bundle: named by a hash of its bytes and of the V8 that compiled it (V8 itself checks only the
 * text's length), so that two builds or two runtimes (VS Code's and the system's Node) never read each other's. The
 * bytes as read, not the decoded text: hashing a string encodes it to UTF-8 again first (3 ms of every start for
 * the 1.8 MB server bundle, against 1 ms for its bytes), and the hash is the same.
 */
function cacheFileOf(bundleFile: string, bytes: Buffer, folder: string): string {
  const key = createHash('sha256').update(`${process.versions.v8} ${process.arch}\n`).update(bytes).digest('hex').slice(0, 20);
  return path.join(folder, `${path.basename(bundleFile, '.js')}-${key}.v8cache`);
}

/** Writes the cache through a temporary file (two servers starting at once never leave half a file). */
function writeCache(script: vm.Script, cacheFile: string, underCompileFlags: CompileFlags): void {
  try {
    const data = underCompileFlags(() => script.createCachedData());
    fs.mkdirSync(path.dirname(cacheFile), { recursive: true, mode: 0o700 });
    const temporary = `${cacheFile}.${process.pid}.tmp`;
    fs.writeFileSync(temporary, data, { mode: 0o600 });
    fs.renameSync(temporary, cacheFile);
    removeOldCaches(cacheFile);
  } catch {
    // A read-only or full disk: the next start compiles from source, as this one did.
  }
}

/** Keeps the newest few caches of the same bundle besides this one. */
function removeOldCaches(cacheFile: string): void {
  const folder = path.dirname(cacheFile);
  const prefix = `${path.basename(cacheFile).replace(/-[0-9a-f]+\.v8cache$/, '')}-`;
  const others = fs.readdirSync(folder)
    .filter((name) => name.startsWith(prefix) && name.endsWith('.v8cache') && path.join(folder, name) !== cacheFile)
    .map((name) => ({ file: path.join(folder, name), modified: fs.statSync(path.join(folder, name)).mtimeMs }))
    .sort((a, b) => b.modified - a.modified);
  for (const { file } of others.slice(OTHER_CACHES_KEPT)) fs.rmSync(file, { force: true });
}

/**
 * Runs `work` under the V8 flags the bundle was compiled with, where the bundle changed some since: V8 accepts a
 * cache only under the flags it was made with.
 */
export type CompileFlags = <T>(work: () => T) => T;

/**
 * Runs `bundleFile` (a CommonJS module) as `require` would, compiled from its cache in `cacheFolder` when one
 * fits; without a folder, plainly required. Where no cache was accepted, one is written once the first documents
 * have been analysed (or when the process exits before that).
 */
export function runBundleWithCodeCache(bundleFile: string, cacheFolder: string | undefined, underCompileFlags: CompileFlags = (work) => work()): void {
  let compiled: { run: vm.Script; cacheFile: string; cacheAccepted: boolean } | undefined;
  if (cacheFolder) {
    try {
      const bytes = fs.readFileSync(bundleFile);
      const source = bytes.toString('utf8');
      const cacheFile = cacheFileOf(bundleFile, bytes, cacheFolder);
      let cachedData: Buffer | undefined;
      try {
        cachedData = fs.readFileSync(cacheFile);
      } catch {
        cachedData = undefined;
      }
      // The wrapper Node puts around a CommonJS module, on the bundle's first line (its line numbers stay).
      const run = new vm.Script(`(function (exports, require, module, __filename, __dirname) { ${source}\n})`, { filename: bundleFile, cachedData });
      compiled = { run, cacheFile, cacheAccepted: cachedData !== undefined && !run.cachedDataRejected };
    } catch {
      compiled = undefined;
    }
  }
  if (!compiled) {
    require(bundleFile);
    return;
  }
  const { run, cacheFile, cacheAccepted } = compiled;
  if (!cacheAccepted) {
    let written = false;
    const write = () => {
      if (written) return;
      written = true;
      writeCache(run, cacheFile, underCompileFlags);
    };
    const start = performance.now();
    let last = performance.eventLoopUtilization();
    const writeWhenIdle = () => {
      const now = performance.eventLoopUtilization();
      const busy = performance.eventLoopUtilization(now, last).utilization;
      last = now;
      if (busy < IDLE_UTILIZATION || performance.now() - start >= WRITE_CACHE_AT_LATEST_MS) write();
      else setTimeout(writeWhenIdle, IDLE_CHECK_MS).unref();
    };
    setTimeout(() => {
      last = performance.eventLoopUtilization();
      setTimeout(writeWhenIdle, IDLE_CHECK_MS).unref();
    }, WRITE_CACHE_AFTER_MS - IDLE_CHECK_MS).unref();
    process.once('exit', write);
  }
  const bundleModule = new Module(bundleFile, require.main);
  bundleModule.filename = bundleFile;
  const moduleFunction = run.runInThisContext() as (...args: unknown[]) => void;
  moduleFunction.call(bundleModule.exports, bundleModule.exports, Module.createRequire(bundleFile), bundleModule, bundleFile, path.dirname(bundleFile));
  bundleModule.loaded = true;
}
