// Compares the estimator with the "parameters x 16 bytes" rule of thumb (accelerate estimate-memory style:
// fp32 weights + gradients + two Adam moments, no activations) on every per-step peak of gpu-truth.
// Usage: npm run bench:estimate   (reads test/estimator/data/h200-truth.json)
import * as fs from 'node:fs';
import * as path from 'node:path';
import { configFromTruth, errorStats, isPerStepPeak, peerEstimate, type ErrorStats, type TruthRecord } from '../server/src/estimator/calibration';
import { estimate } from '../server/src/estimator/model';
import { benchHoldout } from './bench-holdout';

const repoRoot = path.resolve(__dirname, '..');
const truthPath = path.join(repoRoot, 'test', 'estimator', 'data', 'h200-truth.json');
const MIB = 1024 * 1024;

function percent(x: number): string {
  return `${(x * 100).toFixed(1)}%`;
}

function main(): void {
  const runs = (JSON.parse(fs.readFileSync(truthPath, 'utf8')) as { runs: TruthRecord[] }).runs.filter(isPerStepPeak);
  const ours: number[] = [];
  const peer: number[] = [];
  const header = `${'configuration'.padEnd(46)} ${'measured'.padStart(9)} ${'ours'.padStart(9)} ${'err'.padStart(7)} ${'peer'.padStart(9)} ${'err'.padStart(7)}`;
  console.log(`peak allocated, MiB; peer = parameters x 16 (training) or parameters x weight bytes (inference)\n${header}`);
  for (const record of runs) {
    const config = configFromTruth(record);
    const result = estimate(config);
    const peerBytes = config.mode === 'train' ? peerEstimate(result.parameters) : result.parameters * (config.weightDtype === 'fp32' ? 4 : 2);
    const measured = record.peak_alloc!;
    ours.push(result.peakAllocated / measured - 1);
    peer.push(peerBytes / measured - 1);
    console.log(`${record.id.padEnd(46)} ${(measured / MIB).toFixed(0).padStart(9)} ${(result.peakAllocated / MIB).toFixed(0).padStart(9)} ` +
      `${percent(ours[ours.length - 1]).padStart(7)} ${(peerBytes / MIB).toFixed(0).padStart(9)} ${percent(peer[peer.length - 1]).padStart(7)}`);
  }
  const line = (name: string, s: ErrorStats): string =>
    `${name.padEnd(10)} n=${s.count}  median |err| ${percent(s.medianAbs)}  p90 |err| ${percent(s.p90Abs)}  worst under ${percent(s.worstUnder)}  worst over ${percent(s.worstOver)}`;
  console.log(`\n${line('ours', errorStats(ours))}\n${line('params*16', errorStats(peer))}`);
}

main();
// Beside it, the held-out scripts (written from the contract alone, measured on an H200): detection and all.
void (async () => {
  for (const set of ['holdout', 'holdout2', 'holdout3', 'holdout4', 'holdout5', 'holdout6', 'holdout7']) {
    console.log(`\nheld-out scripts (test/gpu/${set}), detection from the script and estimate:`);
    await benchHoldout(undefined, set);
  }
})();
