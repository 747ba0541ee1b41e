import * as fs from 'node:fs';
import { Session } from 'node:inspector/promises';
import { performance } from 'node:perf_hooks';
import { DocumentStore } from '../../server/src/engine/documents';
import { analyzeIncrementally, completeFacts } from '../../server/src/engine/incremental';
import type { AnalysisCache } from '../../server/src/engine/incremental';
import { generateTrainingScript } from './generate';

const size = Number(process.argv[2] ?? 5000);
const kind = process.argv[3] ?? 'function body';
const n = Number(process.argv[4] ?? 40);
async function main() {
  let text = generateTrainingScript(size);
  const store = new DocumentStore();
  let state = await store.open('mem://a.py', 1, text);
  let model = store.modelOf(state)!;
  let t0 = performance.now();
  let r = analyzeIncrementally(model, state.content, {}, 'k', undefined);
  console.log('first analysis', (performance.now() - t0).toFixed(1));
  t0 = performance.now();
  completeFacts(model, r.cache);
  console.log('completeFacts', (performance.now() - t0).toFixed(1));
  let cache: AnalysisCache = r.cache;
  const lines = text.split('\n');
  const pat = kind === 'module level' ? /^BLOCK_\d+_WIDTH = 256/ : kind === 'training loop' ? /total \+= loss.item\(\)/ : kind === 'docstring' ? /"""Residual MLP block/ : /seen = 0/;
  // The end of the file: the entry point's last line, as `npm run bench` edits it.
  const sites = kind === 'end of file' ? [lines.length - 2] : lines.map((l, i) => [l, i] as const).filter(([l]) => pat.test(l)).map(([, i]) => i);
  const times: number[][] = [];
  let version = 1;
  const session = new Session();
  if (process.env.PROFILE_OUT) { session.connect(); await session.post('Profiler.enable'); await session.post('Profiler.start'); }
  for (let k = 0; k < n; k++) {
    const line = sites[Math.floor((k * sites.length) / n)]!;
    for (const undo of [false, true]) {
      const l = lines[line]!;
      const col = kind === 'module level' ? l.indexOf('256') + 1 : kind === 'training loop' ? l.indexOf('total') + 3 : kind === 'docstring' ? l.indexOf('MLP') + 1 : kind === 'end of file' ? l.length - 1 : l.indexOf('seen') + 1;
      const ch = undo ? l[col]! : 'Q';
      const a = performance.now();
      // The end of the file: a space typed after the last character, then deleted.
      const change = kind === 'end of file'
        ? { range: { start: { line, character: l.length }, end: { line, character: l.length + (undo ? 1 : 0) } }, text: undo ? '' : ' ' }
        : { range: { start: { line, character: col }, end: { line, character: col + 1 } }, text: kind === 'module level' ? (undo ? l[col]! : '7') : ch };
      state = (await store.change('mem://a.py', ++version, [change]))!;
      const b = performance.now();
      model = store.modelOf(state)!;
      const c = performance.now();
      r = analyzeIncrementally(model, state.content, {}, 'k', cache);
      const d = performance.now();
      cache = r.cache;
      completeFacts(model, cache);
      const e = performance.now();
      times.push([b - a, c - b, d - c, e - d, r.analysedStatements]);
    }
  }
  if (process.env.PROFILE_OUT) { const { profile } = await session.post('Profiler.stop'); fs.writeFileSync(process.env.PROFILE_OUT, JSON.stringify(profile)); }
  const med = (i: number) => { const s = times.map((t) => t[i]!).sort((x, y) => x - y); return s[Math.floor(s.length / 2)]!.toFixed(1); };
  console.log(`${size} ${kind}: change ${med(0)} model ${med(1)} analyze ${med(2)} complete ${med(3)} analysed ${med(4)}`);
}
void main();
