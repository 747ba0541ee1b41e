// Scores which refactorings a build offers on the held-out refactoring scripts (test/gpu/refactor-holdout), against
// what the manifest says a careful engineer would do: apply, refuse, or either. No GPU needed: this is the half of
// the held-out judgement that is about offering (the other half, test/gpu/refactor-holdout/run.py, runs variants).
// Usage: node --import tsx scripts/score-refactor-offers.ts [--cli PATH/TO/cli.js | --src PATH/TO/server/src]
// (--src scores another tree's engine in process, for a build that had no `refactor` command yet)
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

const repoRoot = path.resolve(__dirname, '..');
const holdout = path.join(repoRoot, 'test', 'gpu', 'refactor-holdout');
const cliIndex = process.argv.indexOf('--cli');
const cli = cliIndex > 0 ? path.resolve(process.argv[cliIndex + 1]!) : path.join(repoRoot, 'dist', 'cli.js');

interface Entry { file: string; loop_line: number; refactorings: Record<string, { expect: 'apply' | 'refuse' | 'either' }> }
const manifest = JSON.parse(fs.readFileSync(path.join(holdout, 'manifest.json'), 'utf8')) as { scripts: Record<string, Entry> | Entry[] };
const entries = Array.isArray(manifest.scripts) ? manifest.scripts : Object.values(manifest.scripts);
const srcIndex = process.argv.indexOf('--src');
const src = srcIndex > 0 ? path.resolve(process.argv[srcIndex + 1]!) : undefined;

/** Whether the engine in `src` offers `kind` at the loop's line (the old engine, without the CLI command). */
async function offeredInProcess(file: string, line: number, kind: string): Promise<boolean> {
  const { parsePython } = (await import(path.join(src!, 'engine', 'parser.ts'))) as typeof import('../server/src/engine/parser');
  const { SemanticModel } = (await import(path.join(src!, 'engine', 'semantic', 'model.ts'))) as typeof import('../server/src/engine/semantic/model');
  const { refactoringsAt } = (await import(path.join(src!, 'fixes', 'refactorings', 'index.ts'))) as typeof import('../server/src/fixes/refactorings/index');
  const text = fs.readFileSync(file, 'utf8');
  const tree = (await parsePython(text))!;
  const lineText = text.split('\n')[line - 1] ?? '';
  const offered = refactoringsAt(new SemanticModel(tree, text), text, { line: line - 1, character: /^[ \t]*/.exec(lineText)![0].length });
  tree.delete();
  const prefix = kind === 'amp-bf16' ? 'Enable mixed precision (AMP, bfloat16)' : kind === 'amp-fp16' ? 'Enable mixed precision (AMP, float16'
    : kind === 'checkpointing' ? 'Enable gradient checkpointing' : `Add gradient accumulation (${kind.split(':')[1]} steps`;
  return offered.some((r) => r.title.startsWith(prefix));
}

async function main(): Promise<void> {
const tally = { applyOffered: 0, applyMissed: 0, refuseRefused: 0, refuseOffered: 0, either: 0 };
const wrong: string[] = [];
for (const entry of entries) {
  for (const [kind, { expect }] of Object.entries(entry.refactorings)) {
    const file = path.join(holdout, entry.file);
    const run = src ? { status: (await offeredInProcess(file, entry.loop_line, kind)) ? 0 : 1, stderr: '' }
      : spawnSync(process.execPath, [cli, 'refactor', file, '--line', String(entry.loop_line), '--apply', kind, '--diff'], { encoding: 'utf8' });
    const offered = run.status === 0;
    if (run.status === 2) wrong.push(`${entry.file} ${kind}: usage error ${run.stderr.trim()}`);
    if (expect === 'either') tally.either++;
    else if (expect === 'apply') offered ? tally.applyOffered++ : (tally.applyMissed++, wrong.push(`${path.basename(entry.file)} ${kind}: should be offered (${run.stderr.trim().slice(0, 120)})`));
    else offered ? (tally.refuseOffered++, wrong.push(`${path.basename(entry.file)} ${kind}: must be refused, was offered`)) : tally.refuseRefused++;
  }
}
console.log(wrong.join('\n'));
console.log(`\nshould apply: ${tally.applyOffered} offered, ${tally.applyMissed} not offered; must refuse: ${tally.refuseRefused} refused, ${tally.refuseOffered} offered (wrongly); either: ${tally.either}`);
}

void main();
