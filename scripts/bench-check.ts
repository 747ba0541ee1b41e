// `npm run bench:check`: `oomguard check` against Debian's flake8 on the same 2,000 generated training scripts,
// in lines per second, from one run of each (process start included for both). flake8 runs with its defaults
// (all CPU cores through multiprocessing); oomguard check runs in one process. Install flake8 with
// `apt-get install -y flake8`; without it only oomguard's figure is printed.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { repoRoot } from '../test/helpers/analysis';
import { generateTrainingScript } from './bench/generate';

const SCRIPTS = 2000;

function timed(command: string, args: string[]): { seconds: number; status: number | null; stdout: string; stderr: string } {
  const start = performance.now();
  const result = spawnSync(command, args, { encoding: 'utf8', maxBuffer: 1 << 30 });
  return { seconds: (performance.now() - start) / 1000, status: result.status, stdout: result.stdout ?? '', stderr: result.stderr ?? (result.error ? String(result.error) : '') };
}

function main(): void {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'oomguard-bench-check-'));
  let lines = 0;
  for (let i = 0; i < SCRIPTS; i++) {
    // The same size mix as `npm run bench` (150-510 lines a script).
    const text = generateTrainingScript(150 + (i % 10) * 40, i + 1);
    lines += text.split('\n').length;
    fs.writeFileSync(path.join(dir, `train_${i}.py`), text);
  }
  console.log(`${SCRIPTS} generated scripts, ${lines} lines, ${os.cpus().length} CPU cores`);

  const cli = path.join(repoRoot, 'dist', 'cli.js');
  if (!fs.existsSync(cli)) throw new Error('dist/cli.js is missing: run `npm run build` first');
  const ours = timed(process.execPath, [cli, 'check', dir, '--statistics', '--exit-zero']);
  if (ours.status !== 0) throw new Error(`oomguard check failed (${ours.status}): ${ours.stderr}`);
  const findings = ours.stdout.trim().split('\n').reduce((sum, line) => sum + (Number(line.trim().split('\t')[0]) || 0), 0);
  console.log(`oomguard check: ${ours.seconds.toFixed(2)} s, ${Math.round(lines / ours.seconds)} lines/s (${findings} findings, one process)`);

  const flake8 = timed('flake8', ['--count', '--exit-zero', dir]);
  if (flake8.status === null || /ENOENT/.test(flake8.stderr)) {
    console.log('flake8: not installed (apt-get install -y flake8); no comparison');
  } else if (flake8.status !== 0) {
    throw new Error(`flake8 failed (${flake8.status}): ${flake8.stderr}`);
  } else {
    const reported = flake8.stdout.trim().split('\n').pop();
    const version = spawnSync('flake8', ['--version'], { encoding: 'utf8' }).stdout.split(' ')[0];
    console.log(`flake8 ${version}: ${flake8.seconds.toFixed(2)} s, ${Math.round(lines / flake8.seconds)} lines/s (${reported} findings, default jobs)`);
    console.log(`oomguard check is ${(flake8.seconds / ours.seconds).toFixed(1)}x flake8's throughput`);
  }
  fs.rmSync(dir, { recursive: true, force: true });
}

main();
