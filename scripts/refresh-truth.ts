// Replaces test/estimator/data/h200-truth.json with a newer measurement file of the same shape.
// Usage: npm run data:refresh -- PATH/TO/truth.json
import * as fs from 'node:fs';
import * as path from 'node:path';

const source = process.argv[2];
if (!source) {
  console.error('usage: npm run data:refresh -- PATH/TO/truth.json');
  process.exit(2);
}
const data = JSON.parse(fs.readFileSync(source, 'utf8')) as { meta?: { gpu_name?: unknown; torch?: unknown }; runs?: Array<Record<string, unknown>> };
const runs = data.runs;
if (!Array.isArray(runs) || runs.length === 0 || typeof data.meta?.gpu_name !== 'string') {
  console.error(`${source}: not a measurement file (it needs "meta.gpu_name" and a non-empty "runs" array)`);
  process.exit(2);
}
const missing = runs.findIndex((run) => typeof run.family !== 'string' || typeof run.kind !== 'string');
if (missing >= 0) {
  console.error(`${source}: run ${missing} lacks "family" or "kind"`);
  process.exit(2);
}
const target = path.resolve(__dirname, '..', 'test', 'estimator', 'data', 'h200-truth.json');
const before = (JSON.parse(fs.readFileSync(target, 'utf8')) as { runs: unknown[] }).runs.length;
fs.writeFileSync(target, JSON.stringify(data, null, 1) + '\n');
console.log(`${path.relative(process.cwd(), target)}: ${before} → ${runs.length} runs (${String(data.meta.gpu_name)}, torch ${String(data.meta.torch)})`);
