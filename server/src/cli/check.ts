// `oomguard check [PATH ...]`: the language server's analysis for a terminal or CI (README.md, "Command line").
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { analyze, MAX_ANALYZED_CHARACTERS, tooLargeMessage } from '../engine/analyze';
import { parsePython } from '../engine/parser';
import { recoverTree } from '../engine/recovery';
import { SemanticModel } from '../engine/semantic/model';
import type { Finding } from '../engine/types';
import { createTwoFilesPatch } from 'diff';
import { applyFixes, safeFix } from '../fixes/apply';
import { t } from '../l10n';
import { ConfigLoader, optionsForFile } from '../config/pyproject';
import { collectPythonFiles } from './files';
import type { CliIO } from './io';
import { findingToJson, formatGithub, formatStatistics, formatText, statistics, toSarif } from './output';

const FORMATS = ['text', 'json', 'sarif', 'github'] as const;
type OutputFormat = (typeof FORMATS)[number];

export interface FileFindings {
  file: string;
  text: string;
  findings: Finding[];
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
  // pyproject.toml's [tool.oomguard] configures each file; --select replaces its select, --ignore adds to its ignore.
  const cliSelect = splitCodes(values.select)?.map((code) => code.toUpperCase());
  const cliIgnore = splitCodes(values.ignore)?.map((code) => code.toUpperCase()) ?? [];
  const configs = new ConfigLoader(true);
  const reportedConfigErrors = new Set<string>();
  const results: FileFindings[] = [];
  /** Files that were not analysed (unreadable, not UTF-8, too large, unparsable): never reported as clean. */
  const skipped: string[] = [];
  for (const file of files) {
    const display = path.relative(process.cwd(), file) || file;
    let text: string | undefined;
    try {
      text = readUtf8(file);
    } catch (error) {
      io.stderr(t('{0}: cannot read the file ({1}); skipped.', display, (error as Error).message) + '\n');
      skipped.push(display);
      continue;
    }
    if (text === undefined) {
      io.stderr(t('{0}: not UTF-8 text; skipped.', display) + '\n');
      skipped.push(display);
      continue;
    }
    if (text.length > MAX_ANALYZED_CHARACTERS) {
      io.stderr(`${display}: ${tooLargeMessage(text.length)}\n`);
      skipped.push(display);
      continue;
    }
    const tree = await parsePython(text);
    if (!tree) {
      io.stderr(t('{0}: could not be parsed; skipped.', display) + '\n');
      skipped.push(display);
      continue;
    }
    const project = configs.forFile(file);
    if (project.error && !reportedConfigErrors.has(project.error)) {
      reportedConfigErrors.add(project.error);
      io.stderr(project.error + '\n');
    }
    const fromConfig = optionsForFile(cliSelect && cliSelect.length > 0 ? { ...project.config, select: cliSelect } : project.config, project.root, file);
    const options = { ...fromConfig, ignore: [...(fromConfig.ignore ?? []), ...cliIgnore] };
    const recovered = await recoverTree(text, tree);
    const findings = analyze(new SemanticModel(recovered.tree, recovered.text), text, {
      ...options,
      onRuleError: (code, error) => io.stderr(t('{0}: rule {1} failed: {2}', display, code, String(error)) + '\n'),
    });
    if (recovered.tree !== tree) recovered.tree.delete();
    tree.delete();
    results.push({ file: display, text, findings });
  }
  const exitZero = values['exit-zero'] === true;
  if (values.fix || values.diff) {
    const status = Math.max(applySafeFixes(results, values.diff === true, io), skipped.length > 0 ? 1 : 0);
    return exitZero ? 0 : status;
  }
  const count = results.reduce((sum, result) => sum + result.findings.length, 0);
  if (values.statistics) {
    const stats = statistics(results);
    io.stdout(format === 'json' ? JSON.stringify(stats) + '\n' : formatStatistics(stats));
  } else if (format === 'json') {
    io.stdout(JSON.stringify(results.flatMap((result) => result.findings.map((finding) => findingToJson(result.file, finding)))) + '\n');
  } else if (format === 'sarif') {
    io.stdout(JSON.stringify(toSarif(results, process.cwd()), null, 2) + '\n');
  } else if (format === 'github') {
    io.stdout(formatGithub(results));
  } else {
    io.stdout(formatText(results, count, skipped));
  }
  // --exit-zero: report, but let the CI step pass (usage and I/O errors still exit 2). A skipped file is not clean.
  return (count > 0 || skipped.length > 0) && !exitZero ? 1 : 0;
}

/** `--fix` writes the safe fixes in place; `--diff` prints them as a unified diff and writes nothing. */
function applySafeFixes(results: FileFindings[], diffOnly: boolean, io: CliIO): number {
  let remaining = 0;
  let fixed = 0;
  for (const result of results) {
    const fixes = result.findings.map(safeFix).filter((fix): fix is NonNullable<typeof fix> => !!fix);
    const { text, applied } = applyFixes(result.text, fixes);
    remaining += result.findings.length - applied;
    if (applied === 0) continue;
    fixed += applied;
    if (diffOnly) io.stdout(createTwoFilesPatch(result.file, result.file, result.text, text));
    else fs.writeFileSync(result.file, text);
  }
  if (!diffOnly) io.stdout(t('Fixed {0} finding(s); {1} left (they need an unsafe fix or a decision).', fixed, remaining) + '\n');
  return (diffOnly ? fixed + remaining : remaining) > 0 ? 1 : 0;
}
