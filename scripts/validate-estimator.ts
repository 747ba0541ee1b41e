// `npm run bench:validate`: the estimator on each validation script (test/fixtures/estimator/validation/), against
// its H200 measurement (test/gpu/estimator/results/validate.json from test/gpu/estimator/validate.py, and
// validate2.json from validate2.py): measured vs estimated peak allocated memory, the error, and the median / p90 /
// worst under / worst over of the errors, per round and over both.
// Each script goes through the whole pipeline (parse, detect, estimate), as `oomguard estimate --json` does.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parsePython } from '../server/src/engine/parser';
import { errorStats } from '../server/src/estimator/calibration';
import { estimateScript } from '../server/src/estimator/index';

const repoRoot = path.resolve(__dirname, '..');
const scriptsDir = path.join(repoRoot, 'test', 'fixtures', 'estimator', 'validation');
const resultsDir = path.join(repoRoot, 'test', 'gpu', 'estimator', 'results');
const ROUNDS = ['validate.json', 'validate2.json'];
const MIB = 1024 * 1024;

interface Run {
  id: string; peak_alloc?: number; param_count?: number; error?: string | null;
  /** Leak loops (validate2.py's infer='keep'): every batch's output is kept with its graph; peak after each batch. */
  infer?: string; peak_after_each_batch?: number[];
}

function percent(x: number): string {
  return `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)}%`;
}

function printStats(label: string, errors: number[]): void {
  const s = errorStats(errors);
  console.log(`${label}: n=${s.count}  median |err| ${(s.medianAbs * 100).toFixed(1)}%  p90 |err| ${(s.p90Abs * 100).toFixed(1)}%  ` +
    `worst under ${percent(s.worstUnder)}  worst over ${percent(s.worstOver)}  (targets: 8%, 20%, >= -15%)`);
}

async function main(): Promise<void> {
  const all: number[] = [];
  for (const round of ROUNDS) {
    console.log(`\n${round}`);
    const errors = await validateRound((JSON.parse(fs.readFileSync(path.join(resultsDir, round), 'utf8')) as { runs: Run[] }).runs);
    printStats(round, errors);
    all.push(...errors);
  }
  console.log('');
  printStats('all validation scripts', all);
}

async function validateRound(runs: Run[]): Promise<number[]> {
  const errors: number[] = [];
  console.log(`${'script'.padEnd(36)} ${'measured MiB'.padStart(12)} ${'estimate MiB'.padStart(12)} ${'error'.padStart(7)}  detected`);
  for (const run of runs) {
    const file = path.join(scriptsDir, `${run.id}.py`);
    if (!run.peak_alloc || !fs.existsSync(file)) {
      console.log(`${run.id.padEnd(36)} not measured or no script (${run.error ?? 'missing'})`);
      continue;
    }
    const text = fs.readFileSync(file, 'utf8');
    const tree = await parsePython(text);
    if (!tree) throw new Error(`tree-sitter could not parse ${file}`);
    const result = estimateScript(tree, text, file);
    tree.delete();
    const d = result.detected;
    const error = result.peakAllocated / run.peak_alloc - 1;
    const peaks = run.peak_after_each_batch;
    if (run.infer === 'keep' && peaks && peaks.length > 2) {
      // A loop that keeps every output grows by one graph a batch, for as many batches as the data has: not a
      // per-step peak (gpu-truth's leak rows likewise). Checked instead: the graph each batch adds, against the one
      // the estimate keeps per batch (half its activations: the previous output lives while the next forward runs).
      const growth = (peaks[peaks.length - 1] - peaks[0]) / (peaks.length - 1);
      const perBatch = result.breakdown.activations / 2;
      console.log(`${run.id.padEnd(36)} leak loop, ${peaks.length} batches: peak ${(run.peak_alloc / MIB).toFixed(0)} MiB, growth ` +
        `${(growth / MIB).toFixed(0)} MiB/batch measured, ${(perBatch / MIB).toFixed(0)} estimated (${percent(perBatch / growth - 1)}); ` +
        `not in the statistics`);
      continue;
    }
    errors.push(error);
    const size = d.seqLen ? `s${d.seqLen.value}` : d.imageSize ? `i${d.imageSize.value}` : '';
    const params = d.parameters === run.param_count ? '' : ` params ${d.parameters} (measured ${run.param_count})`;
    console.log(`${run.id.padEnd(36)} ${(run.peak_alloc / MIB).toFixed(0).padStart(12)} ${(result.peakAllocated / MIB).toFixed(0).padStart(12)} ` +
      `${percent(error).padStart(7)}  ${d.model.name} b${d.batchSize.value} ${size} ${d.precision.value} ${d.optimizer.value} ${d.mode.value}` +
      `${d.checkpointing ? ' ckpt' : ''}${d.accumulation > 1 ? ` ga${d.accumulation}` : ''}${d.lora ? ` lora r${d.lora.rank}x${d.lora.targetModules.length}` : ''}${params}`);
  }
  return errors;
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
});
