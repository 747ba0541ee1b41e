// The repository stands alone: a clone into an empty folder, with nothing beside it, installs with `npm ci` and
// passes the unit suite. This catches tests, benches or data that read files from outside the repository.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { repoRoot } from '../helpers/analysis';

const INSIDE_CLONE = 'OOMGUARD_STANDALONE_CLONE';

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env) {
  const result = spawnSync(command, args, { cwd, env, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  const output = `${result.stdout ?? ''}${result.stderr ?? ''}`;
  assert.equal(result.status, 0, `${command} ${args.join(' ')} failed in ${cwd}:\n${output.slice(-6000)}`);
  return output;
}

test('a fresh clone with nothing beside it installs and passes the unit suite', { timeout: 30 * 60 * 1000 }, (t) => {
  if (process.env[INSIDE_CLONE]) {
    t.skip('this run is the clone itself');
    return;
  }
  if (!fs.existsSync(path.join(repoRoot, '.git'))) {
    t.skip('not a git checkout');
    return;
  }
  const outer = fs.mkdtempSync(path.join(os.tmpdir(), 'oomguard-clone-'));
  const clone = path.join(outer, 'oomguard');
  try {
    run('git', ['clone', '--quiet', '--no-hardlinks', repoRoot, clone], outer);
    assert.deepEqual(fs.readdirSync(outer), ['oomguard'], 'the clone has something beside it');
    run('npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund'], clone);
    // NODE_TEST_CONTEXT would make the inner test runner think it runs inside this one and skip every file.
    const { NODE_TEST_CONTEXT: _outerRunner, ...inherited } = process.env;
    const env = { ...inherited, [INSIDE_CLONE]: '1' };
    run('npm', ['run', 'build'], clone, env);
    const output = run(process.execPath, ['scripts/run-tests.mjs'], clone, env);
    assert.match(output, /ℹ fail 0/);
    const tests = Number(/ℹ tests (\d+)/.exec(output)?.[1] ?? 0);
    assert.ok(tests > 100, `only ${tests} tests ran in the clone`);
  } finally {
    fs.rmSync(outer, { recursive: true, force: true });
  }
});
