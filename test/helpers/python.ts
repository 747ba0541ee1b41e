// CPython as a test oracle: fixed and refactored files must compile. Tests that need it skip without python3,
// except under CI, where that is a failure.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import type { TestContext } from 'node:test';

export function python3Available(): boolean {
  return spawnSync('python3', ['--version']).status === 0;
}

/** Returns false (and skips the test) when python3 is missing locally; fails under CI=true. */
export function requirePython3(t: TestContext): boolean {
  if (python3Available()) return true;
  if (process.env.CI === 'true') assert.fail('python3 is required under CI');
  t.skip('python3 is not installed: cannot check that the produced files compile');
  return false;
}

/** Compiles every file with CPython in one process (newlines kept as written); returns the failures. */
export function compileAll(files: string[]): string[] {
  const script = 'import sys\nbad=[]\nfor f in sys.argv[1:]:\n    try:\n        compile(open(f, encoding="utf-8", newline="").read(), f, "exec")\n    except SyntaxError as e:\n        bad.append(f"{f}: {e}")\nprint("\\n".join(bad))';
  const result = spawnSync('python3', ['-c', script, ...files], { encoding: 'utf8', maxBuffer: 1 << 26 });
  assert.equal(result.status, 0, result.stderr);
  return result.stdout.split('\n').filter((line) => line.trim().length > 0);
}
