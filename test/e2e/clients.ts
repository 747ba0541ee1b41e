// What the end-to-end tests share: where the real clients are, the skip-or-fail policy when one is missing,
// the artifacts folder, and small waiting helpers.
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import type { JsonFinding } from '../../server/src/cli/output';

export const repoRoot = path.resolve(__dirname, '..', '..');
export const artifactsDir = path.join(repoRoot, 'test-artifacts', 'e2e');
export const isCI = process.env.CI === 'true';

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, name);
    if (dir && fs.existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** Debian's `chromium` (or CHROMIUM_PATH); Playwright's own browser download does not work offline. */
export function findChromium(): string | undefined {
  const fromEnv = process.env.CHROMIUM_PATH;
  if (fromEnv) return fs.existsSync(fromEnv) ? fromEnv : undefined;
  return ['chromium', 'chromium-browser', 'google-chrome'].map(onPath).find(Boolean);
}

export function findNeovim(): string | undefined {
  return onPath('nvim');
}

/** code-server's entry point as test/e2e/setup.mjs installs it. */
export function findCodeServer(): string | undefined {
  const entry = path.join(__dirname, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
  return fs.existsSync(entry) ? entry : undefined;
}

/**
 * Why the suite cannot run here, or undefined when it can. A missing client skips the suite locally; under
 * CI=true the caller turns the reason into a failure, because CI installs every client (.ci/run).
 */
export function missingClients(needs: Array<[what: string, found: string | undefined, install: string]>): string | undefined {
  const missing = needs.filter(([, found]) => !found).map(([what, , install]) => `${what} (${install})`);
  return missing.length ? `missing ${missing.join(', ')}` : undefined;
}

/** The `skip` option for a suite: a message locally, never under CI (the suite then fails in its `before`). */
export function skipUnlessCI(reason: string | undefined): string | false {
  if (!reason) return false;
  if (isCI) return false;
  console.log(`# e2e skipped: ${reason}`);
  return reason;
}

export function failIfMissing(reason: string | undefined): void {
  if (reason) throw new Error(`${reason}; under CI=true every e2e client must be installed (see .ci/run)`);
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** Polls `probe` until it returns a value other than undefined, or throws `message()` after `timeoutMs`. */
export async function waitFor<T>(probe: () => Promise<T | undefined> | T | undefined, timeoutMs: number, message: () => string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(message());
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** A finding as `oomguard check --output-format json` prints it. */
export type CliFinding = JsonFinding;

/** Applies the CLI's 1-based edits to `text` (last first, so earlier positions stay valid). */
export function applyCliEdits(text: string, edits: NonNullable<CliFinding['fix']>['edits']): string {
  const lines = text.split('\n');
  const offset = (line: number, column: number) => lines.slice(0, line - 1).reduce((sum, l) => sum + l.length + 1, 0) + column - 1;
  const sorted = [...edits].sort((a, b) => offset(b.line, b.column) - offset(a.line, a.column));
  let result = text;
  for (const edit of sorted) {
    result = result.slice(0, offset(edit.line, edit.column)) + edit.newText + result.slice(offset(edit.endLine, edit.endColumn));
  }
  return result;
}
