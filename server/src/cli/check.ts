// `oomguard check [PATH ...]`: the language server's analysis for a terminal or CI (README.md, "Command line").
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { analyze, MAX_ANALYZED_CHARACTERS, tooLargeMessage } from '../engine/analyze';
import { parsePython, pythonParser } from '../engine/parser';
import { copyParsedInParts } from '../engine/parse-in-parts';
import { answerQueriesWithoutTree, queriesMayMatch } from '../engine/queries';
import { computeLineStarts } from '../engine/lines';
import { SourceText } from '../engine/syntax-tree';
import { recoverTree } from '../engine/recovery';
import { SemanticModel, STATEMENT_NODES_COLLECTOR } from '../engine/semantic/model';
import type { Finding } from '../engine/types';
import { createTwoFilesPatch } from 'diff';
import { applyEdits, applyFixes, chooseFixEdits, safeFix } from '../fixes/apply';
import type { AnalysisOptions } from '../engine/analyze';
import { cellRows, toCellEdits } from '../engine/notebook';
import { readNotebook, replaceCellSources } from './ipynb';
import type { CheckedNotebook } from './ipynb';
import { cellLabel } from './output';
import { t } from '../l10n';
import { optionsForFile } from '../config/pyproject';
import { ConfigLoader } from '../config/pyproject-files';
import { collectPythonFiles, isNotebookPath } from './files';
import type { CliIO } from './io';
import { findingToJson, formatGithub, formatStatistics, formatText, statistics, toSarif } from './output';
import { chooseWasmTier } from './wasm-tier';
import { chooseJitBudget } from './jit-budget';
import { CheckQueue, checkInWorkers, checkWorkerCount, type CheckJob, type CheckOutcome } from './check-workers';

const FORMATS = ['text', 'json', 'sarif', 'github'] as const;
type OutputFormat = (typeof FORMATS)[number];

export interface FileFindings {
  /** The path as printed (relative to the working directory). */
  file: string;
  /** The path to read and write. */
  path: string;
  /** The text the findings' positions refer to: the file, or a notebook's program (its code cells joined). */
  text: string;
  findings: Finding[];
  /** For a notebook: its file and program; findings are mapped into its cells when printed and fixed. */
  notebook?: CheckedNotebook;
}

/** Decodes a file as UTF-8, or returns undefined when it is not valid UTF-8 text. */
export function readUtf8(file: string): string | undefined {
  const bytes = fs.readFileSync(file);
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    // NUL bytes mean binary junk with a .py name.
    return text.includes('\u0000') ? undefined : text;
  } catch {
    return undefined;
  }
}

function splitCodes(value: string | undefined): string[] | undefined {
  return value?.split(',').map((code) => code.trim()).filter((code) => code.length > 0);
}

export async function runCheck(argv: string[], io: CliIO): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        'output-format': { type: 'string', default: 'text' },
        select: { type: 'string' },
        ignore: { type: 'string' },
        fix: { type: 'boolean', default: false },
        diff: { type: 'boolean', default: false },
        'exit-zero': { type: 'boolean', default: false },
        statistics: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    io.stderr(`${(error as Error).message}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.stdout(t('Usage: oomguard check [PATH ...] [--output-format text|json|sarif|github] [--select CODES] [--ignore CODES] [--fix | --diff] [--exit-zero] [--statistics]') + '\n');
    return 0;
  }
  const format = values['output-format'] as OutputFormat;
  if (!FORMATS.includes(format)) {
    io.stderr(t('Unknown output format "{0}" (use text, json, sarif or github).', format ?? '') + '\n');
    return 2;
  }
  const { files, missing } = collectPythonFiles(positionals.length > 0 ? positionals : ['.']);
  if (missing.length > 0) {
    for (const target of missing) io.stderr(t('{0}: no such file or directory', target) + '\n');
    return 2;
  }
  chooseWasmTier(files);
  // pyproject.toml's [tool.oomguard] configures each file; --select replaces its select, --ignore adds to its ignore.
  const cliSelect = splitCodes(values.select)?.map((code) => code.toUpperCase());
  const cliIgnore = splitCodes(values.ignore)?.map((code) => code.toUpperCase()) ?? [];
  const configs = new ConfigLoader(true);
  const reportedConfigErrors = new Set<string>();
  const jobs: CheckJob[] = files.map((file, index) => {
    const display = path.relative(process.cwd(), file) || file;
    const project = configs.forFile(file);
    if (project.error && !reportedConfigErrors.has(project.error)) {
      reportedConfigErrors.add(project.error);
      io.stderr(project.error + '\n');
    }
    const fromConfig = optionsForFile(cliSelect && cliSelect.length > 0 ? { ...project.config, select: cliSelect } : project.config, project.root, file);
    return { index, file, display, options: { ...fromConfig, ignore: [...(fromConfig.ignore ?? []), ...cliIgnore] } };
  });
  const workers = checkWorkerCount(jobs.length);
  chooseJitBudget(workers);
  // The other threads take files from the queue as this one does (what they say waits, to keep file order).
  const queue = new CheckQueue();
  const inThreads = workers > 1 ? checkInWorkers(jobs, workers, queue) : Promise.resolve([]);
  const checkHere = async (job: CheckJob): Promise<CheckOutcome> => {
    let stderr = '';
    const buffered = { ...io, stderr: (text: string) => void (stderr += text) };
    const options: AnalysisOptions = { ...job.options, onRuleError: ruleErrorReporter(job.display, buffered) };
    return { index: job.index, result: await checkFile(job.file, job.display, options, buffered), stderr };
  };
  const ownShare = new Map<number, CheckOutcome>();
  if (workers > 1) for (let taken = queue.take(); taken < jobs.length; taken = queue.take()) ownShare.set(taken, await checkHere(jobs[taken]!));
  const fromWorkers = await inThreads;
  const results: FileFindings[] = [];
  const skipped: string[] = [];
  for (const job of jobs) {
    // What a failed thread left is checked here now.
    const outcome = ownShare.get(job.index) ?? fromWorkers[job.index] ?? (await checkHere(job));
    if (outcome.stderr) io.stderr(outcome.stderr);
    if (outcome.result) results.push(outcome.result);
    else skipped.push(job.display);
  }
  const exitZero = values['exit-zero'] === true;
  // A run that skipped a file never says "All checks passed", and does not pass (cli.md).
  const skippedStatus = skipped.length > 0 ? 1 : 0;
  const skippedLine = skipped.length > 0 ? skippedSummary(skipped) : undefined;
  if (values.fix || values.diff) {
    const status = applySafeFixes(results, values.diff === true, io);
    if (!values.diff && skippedLine) io.stdout(skippedLine + '\n');
    return exitZero ? 0 : Math.max(status, skippedStatus);
  }
  const count = results.reduce((sum, result) => sum + result.findings.length, 0);
  if (values.statistics) {
    const stats = statistics(results);
    io.stdout(format === 'json' ? JSON.stringify(stats) + '\n' : formatStatistics(stats, skippedLine));
  } else if (format === 'json') {
    io.stdout(JSON.stringify(results.flatMap((result) => result.findings.map((finding) => findingToJson(result.file, finding, result.notebook)))) + '\n');
  } else if (format === 'sarif') {
    io.stdout(JSON.stringify(toSarif(results, process.cwd()), null, 2) + '\n');
  } else if (format === 'github') {
    io.stdout(formatGithub(results));
  } else {
    io.stdout(formatText(results, count, skippedLine));
  }
  // --exit-zero: report, but let the CI step pass (usage and I/O errors still exit 2).
  if (exitZero) return 0;
  return Math.max(count > 0 ? 1 : 0, skippedStatus);
}

/** Says on stderr that a rule failed on a file (the other rules still report). */
export function ruleErrorReporter(display: string, io: CliIO): NonNullable<AnalysisOptions['onRuleError']> {
  return (code, error) => io.stderr(t('{0}: rule {1} failed: {2}', display, code, String(error)) + '\n');
}

/** The summary line of a run that skipped files (such a run never says "All checks passed"). */
export function skippedSummary(skipped: readonly string[]): string {
  return t('{0} file(s) skipped: {1}.', skipped.length, skipped.join(', '));
}

/** Parses a text and runs the rules over it, as the language server does for one document version. */
async function analyzeSource(text: string, options: AnalysisOptions): Promise<Finding[] | undefined> {
  await pythonParser();
  // A long text that no query can match is parsed in parts, as the server opens it (parse-in-parts.ts): the parts
  // reuse a few megabytes of the parser's memory where the whole tree of a 70,000-line script grew it by 100 MB,
  // each page of which the kernel maps on first touch.
  const lineStarts = computeLineStarts(text);
  const parts = queriesMayMatch(text) ? undefined : copyParsedInParts(text, new SourceText(text, lineStarts), lineStarts, STATEMENT_NODES_COLLECTOR);
  if (parts) {
    answerQueriesWithoutTree(parts);
    return analyze(new SemanticModel(parts), text, options);
  }
  const tree = await parsePython(text);
  if (!tree) return undefined;
  const recovered = await recoverTree(text, tree);
  try {
    return analyze(new SemanticModel(recovered.tree, recovered.text), text, options);
  } finally {
    if (recovered.tree !== tree) recovered.tree.delete();
    tree.delete();
  }
}

/** Reads and analyses one file (a .py script or an .ipynb notebook); undefined when it was skipped (said on stderr). */
export async function checkFile(file: string, display: string, options: AnalysisOptions, io: CliIO): Promise<FileFindings | undefined> {
  let text: string | undefined;
  try {
    text = readUtf8(file);
  } catch (error) {
    io.stderr(t('{0}: cannot read the file ({1}); skipped.', display, (error as Error).message) + '\n');
    return undefined;
  }
  if (text === undefined) {
    io.stderr(t('{0}: not UTF-8 text; skipped.', display) + '\n');
    return undefined;
  }
  let notebook: CheckedNotebook | undefined;
  let source = text;
  if (isNotebookPath(file)) {
    const read = readNotebook(text);
    if ('error' in read) {
      io.stderr(t('{0}: {1}; skipped.', display, read.error) + '\n');
      return undefined;
    }
    notebook = read;
    source = read.program.text;
    options = { ...options, notebookCells: cellRows(read.program) };
  }
  if (source.length > MAX_ANALYZED_CHARACTERS) {
    io.stderr(`${display}: ${tooLargeMessage(source.length)}\n`);
    return undefined;
  }
  const findings = await analyzeSource(source, options);
  if (!findings) {
    io.stderr(t('{0}: could not be parsed; skipped.', display) + '\n');
    return undefined;
  }
  return { file: display, path: file, text: source, findings, notebook };
}

/** `--fix` writes the safe fixes in place; `--diff` prints them as a unified diff and writes nothing. */
function applySafeFixes(results: FileFindings[], diffOnly: boolean, io: CliIO): number {
  let remaining = 0;
  let fixed = 0;
  for (const result of results) {
    if (result.notebook) {
      const outcome = fixNotebook(result.text, result.findings, result.notebook);
      remaining += result.findings.length - outcome.applied;
      if (outcome.applied === 0) continue;
      fixed += outcome.applied;
      if (diffOnly) {
        // One diff per changed cell, named like the text output names the cell (ruff does the same).
        for (const change of outcome.changes) {
          const name = `${result.file}:${cellLabel(change.cell)}`;
          io.stdout(createTwoFilesPatch(name, name, change.before, change.after));
        }
      } else {
        fs.writeFileSync(result.path, outcome.text);
      }
      continue;
    }
    const fixes = result.findings.map(safeFix).filter((fix): fix is NonNullable<typeof fix> => !!fix);
    const { text, applied } = applyFixes(result.text, fixes);
    remaining += result.findings.length - applied;
    if (applied === 0) continue;
    fixed += applied;
    if (diffOnly) io.stdout(createTwoFilesPatch(result.file, result.file, result.text, text));
    else fs.writeFileSync(result.path, text);
  }
  if (!diffOnly) io.stdout(t('Fixed {0} finding(s); {1} left (they need an unsafe fix or a decision).', fixed, remaining) + '\n');
  return (diffOnly ? fixed + remaining : remaining) > 0 ? 1 : 0;
}

export interface NotebookFixes {
  /** The notebook file with the changed cells' sources rewritten (everything else as it was). */
  text: string;
  applied: number;
  /** Each changed cell (0-based index) with its source before and after. */
  changes: Array<{ cell: number; before: string; after: string }>;
}

/**
 * The safe fixes of a notebook, applied cell by cell, chosen as for a script: a fix whose edits cannot all be
 * made inside cells (one that crosses a cell boundary, or edits a `%%` magic cell) is left out.
 */
export function fixNotebook(program: string, findings: readonly Finding[], notebook: CheckedNotebook): NotebookFixes {
  const cells = notebook.program.cells;
  const fixes = findings
    .map(safeFix)
    .filter((fix): fix is NonNullable<typeof fix> => !!fix && toCellEdits(cells, fix.edits) !== undefined);
  const { edits, applied } = chooseFixEdits(program, fixes);
  const changes: NotebookFixes['changes'] = [];
  const sources = new Map<number, string>();
  for (const group of toCellEdits(cells, edits) ?? []) {
    const before = notebook.file.cells[group.cell.index]!.text;
    const after = applyEdits(before, group.edits);
    sources.set(group.cell.index, after);
    changes.push({ cell: group.cell.index, before, after });
  }
  return { text: replaceCellSources(notebook.file, sources), applied, changes };
}
