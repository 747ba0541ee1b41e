// `oomguard refactor SCRIPT --line N --apply KIND [--diff]` (README.md, "Command line"): applies one training-loop
// refactoring at line N, as the editor's code action does. Exit status: 0 applied, 1 not applicable here (the reason
// on stderr), 2 on a usage or I/O error.
import * as path from 'node:path';
import { formatBytes } from '../engine/bytes';
import * as fs from 'node:fs';
import { parseArgs } from 'node:util';
import { createTwoFilesPatch } from 'diff';
import { parsePython } from '../engine/parser';
import { chooseWasmTier } from './wasm-tier';
import { recoverTree } from '../engine/recovery';
import { SemanticModel } from '../engine/semantic/model';
import { splitLines } from '../engine/lines';
import { applyEdits } from '../fixes/apply';
import { refactoringsAt } from '../fixes/refactorings';
import { trainingLoopAt } from '../fixes/refactorings/training-loop';
import { t } from '../l10n';
import type { CliIO } from './io';

/** The title each KIND's refactoring starts with. */
function titlePrefix(kind: string): string | undefined {
  if (kind === 'amp-bf16') return 'Enable mixed precision (AMP, bfloat16)';
  if (kind === 'amp-fp16') return 'Enable mixed precision (AMP, float16';
  if (kind === 'checkpointing') return 'Enable gradient checkpointing';
  const accumulation = /^accumulation:(\d+)$/.exec(kind);
  return accumulation ? `Add gradient accumulation (${Number(accumulation[1])} steps` : undefined;
}

function usage(): string {
  return t('usage: oomguard refactor SCRIPT --line N --apply amp-bf16|amp-fp16|checkpointing|accumulation:K [--diff]');
}

export async function runRefactor(argv: string[], io: CliIO): Promise<number> {
  let script: string;
  let line: number;
  let kind: string;
  let diffOnly: boolean;
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: { line: { type: 'string' }, apply: { type: 'string' }, diff: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h', default: false } },
    });
    if (values.help) {
      io.stdout(usage() + '\n');
      return 0;
    }
    line = Number(values.line);
    if (positionals.length !== 1 || !Number.isInteger(line) || line < 1 || !values.apply || !titlePrefix(values.apply)) throw new Error(usage());
    script = positionals[0]!;
    kind = values.apply;
    diffOnly = values.diff === true;
  } catch (error) {
    io.stderr(`oomguard refactor: ${error instanceof Error ? error.message : String(error)}\n`);
    return 2;
  }
  let text: string;
  try {
    text = fs.readFileSync(script, 'utf8');
  } catch (error) {
    io.stderr(t('oomguard refactor: cannot read {0}: {1}', script, error instanceof Error ? error.message : String(error)) + '\n');
    return 2;
  }
  chooseWasmTier([script]);
  const tree = await parsePython(text);
  if (!tree) {
    io.stderr(t('oomguard refactor: cannot parse {0}', script) + '\n');
    return 2;
  }
  const recovered = await recoverTree(text, tree);
  try {
    const model = new SemanticModel(recovered.tree, recovered.text);
    const lines = splitLines(text);
    const position = { line: line - 1, character: /^[ \t]*/.exec(lines[line - 1] ?? '')![0].length };
    const steps = /^accumulation:(\d+)$/.exec(kind);
    const offered = refactoringsAt(model, text, position, { accumulation: steps ? Number(steps[1]) : undefined, filePath: path.resolve(script) });
    if (!trainingLoopAt(model, text, position) && offered.length === 0) {
      io.stderr(t('{0}:{1}: no training loop here (a loop that calls backward() and steps an optimizer) and no TrainingArguments(...) to change.', script, line) + '\n');
      return 1;
    }
    const chosen = offered.find((refactoring) => refactoring.title.startsWith(titlePrefix(kind)!));
    if (!chosen) {
      io.stderr(t('{0}:{1}: {2} does not apply to this loop (offered here: {3}). See the refactoring notes in docs/refactoring-measurements.md.', script, line, kind,
        offered.map((refactoring) => refactoring.title).join('; ') || t('nothing')) + '\n');
      return 1;
    }
    const after = applyEdits(text, chosen.edits);
    if (diffOnly) io.stdout(createTwoFilesPatch(script, script, text, after));
    else fs.writeFileSync(script, after);
    // What the estimate expects of the edit, as the editor's panel shows it.
    if (chosen.peak) {
      const { before, after: estimated } = chosen.peak;
      io.stderr(t('{0}: estimated peak {1} → {2} ({3}% less)', chosen.title, formatBytes(before), formatBytes(estimated), ((1 - estimated / before) * 100).toFixed(1)) + '\n');
    }
    return 0;
  } finally {
    if (recovered.tree !== tree) recovered.tree.delete();
    tree.delete();
  }
}
