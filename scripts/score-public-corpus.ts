// Scores `oomguard check` on the public scripts of test/corpus-public against the judgements kept there: every
// finding the build reports is matched to a judged one (code and line); a finding nobody judged is listed for a
// person to judge. The scripts' text is not in the repository (their licences): fetch them with
// test/corpus-public/fetch.sh into a folder and pass it.
// Usage: node --import tsx scripts/score-public-corpus.ts FOLDER [--cli dist/cli.js]
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

interface Judgement { file: string; line: number; code: string; verdict: 'TP' | 'FP' | 'FN'; reason: string }

const folder = process.argv[2];
if (!folder) throw new Error('usage: score-public-corpus.ts FOLDER [--cli dist/cli.js]');
const cli = process.argv.includes('--cli') ? process.argv[process.argv.indexOf('--cli') + 1]! : 'dist/cli.js';
const judgements: Judgement[] = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'test', 'corpus-public', 'judgements.json'), 'utf8'));
const files = fs.readdirSync(folder).filter((name) => /\.(py|ipynb)$/.test(name)).sort();
let output = '';
try {
  output = execFileSync('node', [cli, 'check', ...files.map((name) => path.join(folder, name)), '--output-format', 'json', '--exit-zero'], { encoding: 'utf8', maxBuffer: 64 << 20 });
} catch (error) {
  output = (error as { stdout?: string }).stdout ?? '';
}
const reported: Array<{ file: string; line: number; code: string }> = (JSON.parse(output) as Array<{ file: string; code: string; line: number }>)
  .map((finding) => ({ file: path.basename(finding.file), line: finding.line, code: finding.code }));
const key = (f: { file: string; line: number; code: string }) => `${f.file}:${f.line}:${f.code}`;
const judged = new Map(judgements.map((j) => [key(j), j]));
const reportedKeys = new Set(reported.map(key));
let tp = 0;
let fp = 0;
const unjudged: string[] = [];
const falses: string[] = [];
for (const finding of reported) {
  const j = judged.get(key(finding));
  if (!j) unjudged.push(key(finding));
  else if (j.verdict === 'TP' || j.verdict === 'FN') tp++;
  else { fp++; falses.push(`${key(finding)}  ${j.reason}`); }
}
const missed = judgements.filter((j) => (j.verdict === 'TP' || j.verdict === 'FN') && !reportedKeys.has(key(j)));
console.log(`${files.length} scripts; ${reported.length} findings: ${tp} true, ${fp} false (judged), ${unjudged.length} not judged; ${missed.length} true findings missed`);
for (const line of falses) console.log(`  false: ${line}`);
for (const line of unjudged) console.log(`  not judged: ${line}`);
for (const j of missed) console.log(`  missed: ${key(j)}  ${j.reason}`);
const precision = tp / Math.max(1, tp + fp);
const recall = tp / Math.max(1, tp + missed.length);
console.log(`precision ${precision.toFixed(3)}  recall ${recall.toFixed(3)}  false findings per 50 scripts ${(fp * 50 / files.length).toFixed(1)}`);
