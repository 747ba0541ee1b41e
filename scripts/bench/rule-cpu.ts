// CPU time per rule on a cold model: the bench's generated file (20,000 lines) and a corpus (CORPUS=dir,dir), with a hash
// of the findings to compare builds: `RUNS=5 node --import tsx scripts/bench/rule-cpu.ts`.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as crypto from 'node:crypto';
import { DocumentStore } from '../../server/src/engine/documents';
import { loadPython } from '../../server/src/engine/parser';
import { analyze } from '../../server/src/engine/analyze';
import { RULES } from '../../server/src/rules';
import { generateTrainingScript } from './generate';

const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };

async function run(texts: [string, string][], runs: number): Promise<void> {
  const per: Record<string, number[]> = {};
  const hash = crypto.createHash('sha1');
  for (let r = 0; r < runs; r++) {
    const totals: Record<string, number> = {};
    for (const [name, text] of texts) {
      const store = new DocumentStore();
      const state = await store.open(`file:///${r}/${name}`, 1, text);
      const model = store.modelOf(state)!;
      for (const rule of RULES) {
        const start = cpu();
        const findings = analyze(model, state.content, { rules: [rule], ignore: ['OOM100'] });
        totals[rule.code] = (totals[rule.code] ?? 0) + cpu() - start;
        if (r === 0) hash.update(name + JSON.stringify(findings));
      }
      store.close(state.uri);
    }
    for (const [code, ms] of Object.entries(totals)) (per[code] ??= []).push(ms);
  }
  const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!;
  const rows = Object.entries(per).map(([code, v]) => [code, median(v)] as const).sort((a, b) => b[1] - a[1]);
  console.log('total rules', rows.reduce((s, [, m]) => s + m, 0).toFixed(1), 'ms; ' + rows.slice(0, 8).map(([c, m]) => `${c} ${m.toFixed(1)}`).join('  '));
  console.log('findings hash', hash.digest('hex'));
}

async function main(): Promise<void> {
  await loadPython();
  const runs = Number(process.env.RUNS ?? 5);
  console.log('20000 lines:');
  await run([['gen.py', generateTrainingScript(20000)]], runs);
  // CORPUS: folders of scripts, read recursively (test/corpus by default).
  const files: [string, string][] = [];
  const read = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) read(file);
      else if (entry.name.endsWith('.py')) files.push([file, fs.readFileSync(file, 'utf8')]);
    }
  };
  for (const dir of (process.env.CORPUS ?? 'test/corpus').split(',')) read(dir);
  console.log(`corpus ${files.length} scripts:`);
  await run(files, Math.max(1, Math.floor(runs / 2)));
}
void main();
