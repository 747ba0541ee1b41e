// `npm run bench:validate`: the estimator on each validation script (test/fixtures/estimator/validation/), against
// its H200 measurement (test/gpu/estimator/results/validate.json, from test/gpu/estimator/validate.py): measured vs
// estimated peak allocated memory, the error, and the median / p90 / worst under / worst over of the errors.
// Each script goes through the whole pipeline (parse, detect, estimate), as `oomguard estimate --json` does.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parsePython } from '../server/src/engine/parser';
import { errorStats } from '../server/src/estimator/calibration';
import { estimateScript } from '../server/src/estimator/index';

const repoRoot = path.resolve(__dirname, '..');
const scriptsDir = path.join(repoRoot, 'test', 'fixtures', 'estimator', 'validation');
const resultsPath = path.join(repoRoot, 'test', 'gpu', 'estimator', 'results', 'validate.json');
const MIB = 1024 * 1024;

interface Run { id: string; peak_alloc?: number; param_count?: number; error?: string | null }

function percent(x: number): string {
  return `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)}%`;
}

async function main(): Promise<void> {
  const runs = (JSON.parse(fs.readFileSync(resultsPath, 'utf8')) as { runs: Run[] }).runs;
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
    errors.push(error);
    const size = d.seqLen ? `s${d.seqLen.value}` : d.imageSize ? `i${d.imageSize.value}` : '';
    const params = d.parameters === run.param_count ? '' : ` params ${d.parameters} (measured ${run.param_count})`;
    console.log(`${run.id.padEnd(36)} ${(run.peak_alloc / MIB).toFixed(0).padStart(12)} ${(result.peakAllocated / MIB).toFixed(0).padStart(12)} ` +
      `${percent(error).padStart(7)}  ${d.model.name} b${d.batchSize.value} ${size} ${d.precision.value} ${d.optimizer.value} ${d.mode.value}` +
      `${d.checkpointing ? ' ckpt' : ''}${d.accumulation > 1 ? ` ga${d.accumulation}` : ''}${d.lora ? ` lora r${d.lora.rank}x${d.lora.targetModules.length}` : ''}${params}`);
  }
  const s = errorStats(errors);
  console.log(`\nn=${s.count}  median |err| ${(s.medianAbs * 100).toFixed(1)}%  p90 |err| ${(s.p90Abs * 100).toFixed(1)}%  ` +
    `worst under ${percent(s.worstUnder)}  worst over ${percent(s.worstOver)}  (targets: 8%, 20%, >= -15%)`);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
});
