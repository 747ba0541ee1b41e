// Scores the estimator on a held-out set (test/gpu/holdout: 40 scripts; test/gpu/holdout2 and holdout3: 20 more each, holdout4: 24, holdout5: 26, holdout6: 30, holdout7: 30, written later;
// all from the contract alone, measured on an H200 by test/gpu/holdout/run.py): estimated peak allocated against
// torch.cuda.max_memory_allocated().
// Usage: npm run bench:holdout [-- --set holdout2|holdout3|holdout4|holdout5|holdout6|holdout7] [-- --cli PATH/TO/cli.js]   (--cli scores another build)
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { errorStats, type ErrorStats } from '../server/src/estimator/calibration';
import { parsePython } from '../server/src/engine/parser';
import { estimateScript, toEstimateJson, type EstimateJson } from '../server/src/estimator/index';
import { leakGrowth } from '../server/src/cli/estimate';

const repoRoot = path.resolve(__dirname, '..');
const MIB = 1024 * 1024;

interface Measured { script: string; ok: boolean; peak_alloc?: number; params?: number; kind?: string }

function percent(x: number): string {
  return `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)}%`;
}

async function estimateOf(file: string, cli: string | undefined): Promise<EstimateJson | undefined> {
  if (cli) {
    const run = spawnSync(process.execPath, [cli, 'estimate', file, '--json'], { cwd: path.dirname(file), encoding: 'utf8' });
    try {
      return JSON.parse(run.stdout) as EstimateJson;
    } catch {
      return undefined;
    }
  }
  const text = fs.readFileSync(file, 'utf8');
  const tree = await parsePython(text);
  if (!tree) return undefined;
  try {
    const result = estimateScript(tree, text, file);
    if (!result.unresolved) result.growth = await leakGrowth(tree, text, result, file);
    return toEstimateJson(result);
  } finally {
    tree.delete();
  }
}

/** Prints a held-out set's table and its error statistics; `cli` scores another build's command line instead. */
export async function benchHoldout(cli?: string, set = 'holdout'): Promise<void> {
  const holdout = path.join(repoRoot, 'test', 'gpu', set);
  const results = JSON.parse(fs.readFileSync(path.join(holdout, 'results', 'h200.json'), 'utf8')) as { results: Measured[] } | Measured[];
  const manifest = JSON.parse(fs.readFileSync(path.join(holdout, 'manifest.json'), 'utf8')) as { scripts: Array<{ script: string; kind: string; leak_batches?: number }> };
  const leakBatches = new Map(manifest.scripts.filter((s) => s.kind === 'leak').map((s) => [s.script, s.leak_batches ?? 0]));
  const runs = (Array.isArray(results) ? results : results.results).filter((run) => run.ok && typeof run.peak_alloc === 'number');
  const errors: number[] = [];
  const paramErrors: number[] = [];
  // The rule of thumb given the exact parameter count: 16 bytes per parameter (fp32 weights, gradients, Adam).
  const thumbErrors: number[] = [];
  let unresolved = 0;
  console.log(`${'script'.padEnd(40)} ${'measured'.padStart(9)} ${'ours'.padStart(9)} ${'err'.padStart(9)}  model (parameters: ours / measured)`);
  for (const run of runs.sort((a, b) => a.script.localeCompare(b.script))) {
    const file = path.join(holdout, 'scripts', run.script);
    const json = await estimateOf(file, cli);
    const peak = json?.peakAllocated;
    const measured = run.peak_alloc!;
    const model = json ? `${json.detected.model.name ?? 'unresolved'} (${json.detected.model.source})` : 'failed';
    const params = json && run.params ? `${(json.detected.parameters / 1e6).toFixed(1)}M / ${(run.params / 1e6).toFixed(1)}M` : '';
    if (typeof peak !== 'number') {
      unresolved++;
      console.log(`${run.script.padEnd(40)} ${(measured / MIB).toFixed(0).padStart(9)} ${'—'.padStart(9)} ${'—'.padStart(9)}  ${model}`);
      continue;
    }
    // A leak's measured peak is one step plus what the leaking batches kept: what the estimate says the loop holds
    // at its end where the script fixes its batches, else the estimate's growth times the batches the run made.
    const growth = json?.growth;
    const leaked = growth?.keptAfterBatches ?? (leakBatches.has(run.script) && growth ? growth.bytesPerBatch * leakBatches.get(run.script)! : 0);
    // A leak in a loop that runs no backward (an evaluation after training) sits beside the state that outlives
    // the step, not beside the step's activations.
    const beside = leaked && growth?.heldBeside !== undefined ? growth.heldBeside : peak;
    errors.push((beside + leaked) / measured - 1);
    if (run.params) thumbErrors.push((run.params * 16) / measured - 1);
    if (json && run.params) paramErrors.push(json.detected.parameters / run.params - 1);
    console.log(`${run.script.padEnd(40)} ${(measured / MIB).toFixed(0).padStart(9)} ${((beside + leaked) / MIB).toFixed(0).padStart(9)} ${percent(errors[errors.length - 1]!).padStart(9)}  ${model} ${params}${leaked ? (beside === peak ? ' (peak + growth x batches)' : ' (held beside + growth x batches)') : ''}`);
  }
  const line = (name: string, s: ErrorStats): string =>
    `${name.padEnd(12)} n=${s.count}  median |err| ${percent(s.medianAbs)}  p90 |err| ${percent(s.p90Abs)}  worst under ${percent(s.worstUnder)}  worst over ${percent(s.worstOver)}`;
  console.log(`\n${line('peak', errorStats(errors))}\n${line('params*16', errorStats(thumbErrors))}\n${line('parameters', errorStats(paramErrors))}\nno estimate (model unresolved): ${unresolved} of ${runs.length}`);
}

if (require.main === module) {
  const option = (name: string): string | undefined => {
    const index = process.argv.indexOf(name);
    return index > 0 ? process.argv[index + 1] : undefined;
  };
  const cli = option('--cli');
  void benchHoldout(cli ? path.resolve(cli) : undefined, option('--set'));
}
