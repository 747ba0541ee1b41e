// Scores the rules against the labelled corpus (test/corpus/*.py and *.ipynb, `# expect: CODE` labels):
// precision and recall per code, and every false or missed finding with its line. A notebook is scored as the
// program of its code cells (engine/notebook.ts), where its labels keep their rows.
// Usage: node --import tsx scripts/score-corpus.ts [--verbose]
import * as fs from 'node:fs';
import * as path from 'node:path';
import { RULES } from '../server/src/rules';
import { cellRows } from '../server/src/engine/notebook';
import { readNotebook } from '../server/src/cli/ipynb';
import { analyzeText, listFiles, readLabels, repoRoot } from '../test/helpers/analysis';

export interface CodeScore {
  code: string;
  truePositives: number;
  falsePositives: number;
  falseNegatives: number;
  precision: number;
  recall: number;
}

export interface CorpusScore {
  scores: CodeScore[];
  mistakes: string[];
  /** Whether the corpus has notebooks (rules that only notebooks can trigger need one to be scored). */
  hasNotebooks: boolean;
}

export async function scoreCorpus(dir = path.join(repoRoot, 'test', 'corpus')): Promise<CorpusScore> {
  const codes: string[] = RULES.map((rule) => rule.code);
  const counts = new Map(codes.map((code) => [code, { tp: 0, fp: 0, fn: 0 }]));
  const mistakes: string[] = [];
  const notebooks = listFiles(dir, '.ipynb');
  for (const file of [...listFiles(dir, '.py'), ...notebooks]) {
    let text = fs.readFileSync(file, 'utf8');
    let options = {};
    if (file.endsWith('.ipynb')) {
      const notebook = readNotebook(text);
      if ('error' in notebook) throw new Error(`${file}: ${notebook.error}`);
      text = notebook.program.text;
      options = { notebookCells: cellRows(notebook.program) };
    }
    const labels = new Set(readLabels(text).filter((l) => codes.includes(l.code)).map((l) => `${l.line}:${l.code}`));
    const found = new Set((await analyzeText(text, options)).map((f) => `${f.range.start.line + 1}:${f.code}`));
    const name = path.relative(repoRoot, file);
    for (const key of found) {
      const code = key.split(':')[1]!;
      const count = counts.get(code)!;
      if (labels.has(key)) count.tp++;
      else {
        count.fp++;
        mistakes.push(`false ${code} at ${name}:${key.split(':')[0]}`);
      }
    }
    for (const key of labels) {
      if (found.has(key)) continue;
      const code = key.split(':')[1]!;
      counts.get(code)!.fn++;
      mistakes.push(`missed ${code} at ${name}:${key.split(':')[0]}`);
    }
  }
  const scores = codes.map((code) => {
    const { tp, fp, fn } = counts.get(code)!;
    return {
      code,
      truePositives: tp,
      falsePositives: fp,
      falseNegatives: fn,
      precision: tp + fp === 0 ? 1 : tp / (tp + fp),
      recall: tp + fn === 0 ? 1 : tp / (tp + fn),
    };
  });
  return { scores, mistakes, hasNotebooks: notebooks.length > 0 };
}

if (require.main === module) {
  void scoreCorpus().then(({ scores, mistakes }) => {
    console.log('code     TP  FP  FN  precision  recall');
    for (const s of scores) {
      console.log(`${s.code}  ${String(s.truePositives).padStart(3)} ${String(s.falsePositives).padStart(3)} ${String(s.falseNegatives).padStart(3)}  ${s.precision.toFixed(3).padStart(9)}  ${s.recall.toFixed(3).padStart(6)}`);
    }
    if (process.argv.includes('--verbose')) for (const m of mistakes) console.log(m);
  });
}
