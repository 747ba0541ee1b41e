// Runs `oomguard estimate` (dist/cli.js, after `npm run build`) on each multi-GPU training script for every
// strategy at 1 and 2 GPUs and writes predictions.json, which run_all.py puts beside the measured peaks.
//
//   node test/gpu/multi/predict.mjs            (from the repository root)
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..', '..');
const cli = join(root, 'dist', 'cli.js');
const SCRIPTS = { gpt2_medium: 'train_gpt2_medium.py', llama_1b: 'train_llama_1b.py' };
// The scripts' --strategy and the estimator's (harness.py STRATEGIES says why SHARD_GRAD_OP maps to zero2).
const STRATEGIES = { ddp: 'ddp', fsdp_full: 'fsdp', fsdp_grad_op: 'zero2', zero2: 'zero2', zero3: 'zero3' };
const GPUS = [1, 2];

const predictions = { generatedBy: 'node test/gpu/multi/predict.mjs', configs: {} };
for (const [config, script] of Object.entries(SCRIPTS)) {
  const file = relative(root, join(here, 'scripts', script));
  predictions.configs[config] = {};
  for (const [strategy, estimatorStrategy] of Object.entries(STRATEGIES)) {
    predictions.configs[config][strategy] = {};
    for (const gpus of GPUS) {
      const args = [cli, 'estimate', file, '--gpus', String(gpus), '--strategy', estimatorStrategy, '--json'];
      const out = JSON.parse(execFileSync(process.execPath, args, { cwd: root, encoding: 'utf8' }));
      predictions.configs[config][strategy][gpus] = {
        command: `oomguard estimate ${file} --gpus ${gpus} --strategy ${estimatorStrategy} --json`,
        peakAllocated: out.peakAllocated,
        peakReserved: out.peakReserved,
        peakPhase: out.peakPhase,
        breakdown: out.breakdown,
        detected: {
          model: out.detected.model.name, parameters: out.detected.parameters, batchSize: out.detected.batchSize.value,
          seqLen: out.detected.seqLen?.value ?? null, precision: out.detected.precision.value,
          optimizer: out.detected.optimizer.value, gpus: out.detected.gpus, strategy: out.detected.strategy,
        },
      };
    }
  }
}
const target = join(here, 'predictions.json');
writeFileSync(target, JSON.stringify(predictions, null, 1) + '\n');
console.log(`wrote ${relative(root, target)}`);
