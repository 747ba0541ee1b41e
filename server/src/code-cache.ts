// Runs a CommonJS bundle from a V8 code cache: the bytecode of the functions an earlier run compiled, kept in the
// user's cache folder. Without it every start compiles the 1.6 MB server bundle again, and each function the first
// analysis calls on its first call. The cache only ever saves time: one that is missing, unreadable, made by
// another V8 or under other flags (V8 checks and rejects it) means a compile from source and a new cache; one that
// cannot be written is not written.
import type * as Crypto from 'node:crypto';
import * as fs from 'node:fs';
import Module from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import type * as PerfHooks from 'node:perf_hooks';
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
 * The SHA-256 of a bundle's bytes, as the build computed it (scripts/build.mjs), and their length: the launcher then
 * neither loads node:crypto nor hashes 1.8 MB on every start.
 */
export interface BundleDigest {
  bytes: number;
  sha256: string;
}

/**
 * The cache file of a bundle: named by a hash of its bytes and by the V8 that compiled it (V8 itself checks only the
 * text's length), so that two builds or two runtimes (VS Code's and the system's Node) never read each other's. The
 * bytes' hash is the build's where it has the bytes' length; a bundle replaced since is hashed here (its bytes as
 * read, not the decoded text: 1 ms for the 1.8 MB server bundle against 3 ms, and node:crypto loaded only then).
 */
function cacheFileOf(bundleFile: string, bytes: Buffer, folder: string, digest: BundleDigest | undefined): string {
  const bundleHash = digest?.bytes === bytes.length ? digest.sha256 : (require('node:crypto') as typeof Crypto).createHash('sha256').update(bytes).digest('hex');
  const key = bundleHash.slice(0, 12) + fnv1a(`${process.versions.v8} ${process.arch}`);
  return path.join(folder, `${path.basename(bundleFile, '.js')}-${key}.v8cache`);
}

/** FNV-1a (32 bits) of a short text, as 8 hexadecimal digits: tells runtimes apart, where no secret is at stake. */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return (hash >>> 0).toString(16).padStart(8, '0');
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
 * have been analysed (or when the process exits before that). `digest`: the bundle's, as the build computed it.
 */
export function runBundleWithCodeCache(bundleFile: string, cacheFolder: string | undefined, underCompileFlags: CompileFlags = (work) => work(), digest?: BundleDigest): void {
  let compiled: { run: vm.Script; cacheFile: string; cacheAccepted: boolean } | undefined;
  if (cacheFolder) {
    try {
      const bytes = fs.readFileSync(bundleFile);
      const source = bytes.toString('utf8');
      const cacheFile = cacheFileOf(bundleFile, bytes, cacheFolder, digest);
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
    // node:perf_hooks only here, where a cache is to be written: a start from the cache never loads it.
    const { performance } = require('node:perf_hooks') as typeof PerfHooks;
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
