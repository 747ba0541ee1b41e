// How findings are printed: ruff-like text and the JSON objects of the CLI contract (1-based lines and columns).
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { compareCodes } from '../engine/analyze';
import { UNUSED_NOQA } from '../engine/suppression';
import { toCellEdits, toCellPosition, toCellRange } from '../engine/notebook';
import { fileLineOf } from './ipynb';
import type { CheckedNotebook } from './ipynb';
import type { Finding, Fix, Range, Severity, TextEdit } from '../engine/types';
import { t } from '../l10n';
import { ruleDocUrl } from '../protocol';
import { RULE_CODES } from '../rules/codes';
import { VERSION } from '../version';

/** Where a finding is in a notebook: its cell (0-based index, every cell counted) and its range in that cell. */
export function locateInNotebook(notebook: CheckedNotebook, range: Range): { cell: number; range: Range } {
  const cells = notebook.program.cells;
  const mapped = toCellRange(cells, range);
  if (mapped) return { cell: mapped.cell.index, range: mapped.range };
  // A range that runs into the next cell (only where a syntax error joins cells): it ends with its first cell.
  const start = toCellPosition(cells, range.start);
  if (!start) return { cell: 0, range };
  const end = { line: start.cell.lineCount - 1, character: start.cell.lastLineLength };
  return { cell: start.cell.index, range: { start: start.position, end } };
}

/** `cell 3`: how a notebook cell is named in a location (not translated: tools parse it, as they parse ruff's). */
export function cellLabel(index: number): string {
  return `cell ${index + 1}`;
}

export interface JsonEdit {
  /** For a notebook: the cell (1-based, every cell counted) whose lines `line` and `endLine` are. */
  cell?: number;
  line: number;
  column: number;
  endLine: number;
  endColumn: number;
  newText: string;
}

export interface JsonFinding {
  file: string;
  /** For a notebook: the cell (1-based, every cell counted); `line` and `column` are then within that cell. */
  cell?: number;
  code: string;
  name: string;
  severity: string;
  line: number;
  column: number;
  endLine: number;
  endColumn: number;
  message: string;
  fix: { safe: boolean; title: string; edits: JsonEdit[] } | null;
}

function editToJson(edit: TextEdit): JsonEdit {
  return {
    line: edit.range.start.line + 1,
    column: edit.range.start.character + 1,
    endLine: edit.range.end.line + 1,
    endColumn: edit.range.end.character + 1,
    newText: edit.newText,
  };
}

/** The fix the CLI shows: the preferred one, else the first safe one, else the first. */
export function primaryFix(finding: Finding): Fix | undefined {
  return finding.fixes.find((fix) => fix.preferred) ?? finding.fixes.find((fix) => fix.safe) ?? finding.fixes[0];
}

export function findingToJson(file: string, finding: Finding, notebook?: CheckedNotebook): JsonFinding {
  const fix = primaryFix(finding);
  if (notebook) {
    const { cell, range } = locateInNotebook(notebook, finding.range);
    // A fix that cannot be made inside cells (it would cross a cell boundary) is not offered.
    const cellEdits = fix ? toCellEdits(notebook.program.cells, fix.edits) : undefined;
    return {
      file,
      cell: cell + 1,
      code: finding.code,
      name: finding.name,
      severity: finding.severity,
      line: range.start.line + 1,
      column: range.start.character + 1,
      endLine: range.end.line + 1,
      endColumn: range.end.character + 1,
      message: finding.message,
      fix: fix && cellEdits
        ? { safe: fix.safe, title: fix.title, edits: cellEdits.flatMap((group) => group.edits.map((edit) => ({ cell: group.cell.index + 1, ...editToJson(edit) }))) }
        : null,
    };
  }
  return {
    file,
    code: finding.code,
    name: finding.name,
    severity: finding.severity,
    line: finding.range.start.line + 1,
    column: finding.range.start.character + 1,
    endLine: finding.range.end.line + 1,
    endColumn: finding.range.end.character + 1,
    message: finding.message,
    fix: fix ? { safe: fix.safe, title: fix.title, edits: fix.edits.map(editToJson) } : null,
  };
}

/** `train.py:12:5` or, in a notebook, `nb.ipynb:cell 3:2:5` (line and column within the cell). */
export function locationText(file: string, finding: Finding, notebook?: CheckedNotebook): string {
  if (!notebook) return `${file}:${finding.range.start.line + 1}:${finding.range.start.character + 1}`;
  const { cell, range } = locateInNotebook(notebook, finding.range);
  return `${file}:${cellLabel(cell)}:${range.start.line + 1}:${range.start.character + 1}`;
}

type CheckedFile = { file: string; findings: Finding[]; notebook?: CheckedNotebook };

/** Ruff-like text; `skipped` (the summary of skipped files) replaces "All checks passed" and follows the count. */
export function formatText(results: ReadonlyArray<CheckedFile>, count: number, skipped?: string): string {
  let out = '';
  for (const { file, findings, notebook } of results) {
    for (const finding of findings) {
      out += `${locationText(file, finding, notebook)}: ${finding.code} ${finding.message}\n`;
    }
  }
  if (count > 0) out += t('Found {0} finding(s).', count) + '\n';
  else if (!skipped) out += t('All checks passed.') + '\n';
  if (skipped) out += skipped + '\n';
  return out;
}

// ---------------------------------------------------------------- SARIF 2.1.0, GitHub annotations, statistics

/** Every code `check` can report: the rule table plus OOM100 (unused noqa), for SARIF's rule metadata. */
export function reportableCodes(): Array<{ code: string; name: string; defaultSeverity: Severity }> {
  return [UNUSED_NOQA, ...RULE_CODES];
}

const SARIF_LEVEL: Record<Severity, 'error' | 'warning' | 'note'> = { error: 'error', warning: 'warning', information: 'note', hint: 'note' };

/** `tensor-appended-to-list` → `Tensor appended to list`. */
function describe(name: string): string {
  const words = name.replace(/-/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function sarifRegion(range: Range): Record<string, number> {
  return { startLine: range.start.line + 1, startColumn: range.start.character + 1, endLine: range.end.line + 1, endColumn: range.end.character + 1 };
}

/** A file path as a SARIF artifact URI relative to %SRCROOT% (the working directory, the repository root in CI). */
function artifactUri(file: string): string {
  return file.split(path.sep).map(encodeURIComponent).join('/');
}

/**
 * SARIF 2.1.0 for GitHub code scanning (`github/codeql-action/upload-sarif`): one run, every rule with its help URI,
 * results located relative to %SRCROOT%, and the fix each finding offers (columns count UTF-16 units, as SARIF's
 * default columnKind says).
 */
export function toSarif(results: ReadonlyArray<CheckedFile>, cwd: string): object {
  const codes = reportableCodes();
  const index = new Map(codes.map((rule, i) => [rule.code, i]));
  const rules = codes.map((rule) => ({
    id: rule.code,
    name: rule.name,
    shortDescription: { text: describe(rule.name) },
    helpUri: ruleDocUrl(rule.code),
    help: { text: t('See {0}', ruleDocUrl(rule.code)) },
    defaultConfiguration: { level: SARIF_LEVEL[rule.defaultSeverity] },
  }));
  const sarifResults = results.flatMap(({ file, findings, notebook }) =>
    findings.map((finding) => {
      const uri = artifactUri(file);
      if (notebook) {
        // In a notebook the region is the line of the file that holds the cell's line; the cell position leads the message.
        const { cell, range } = locateInNotebook(notebook, finding.range);
        return {
          ruleId: finding.code,
          ruleIndex: index.get(finding.code) ?? -1,
          level: SARIF_LEVEL[finding.severity],
          message: { text: `${cellLabel(cell)}:${range.start.line + 1}:${range.start.character + 1}: ${finding.message}` },
          locations: [{ physicalLocation: { artifactLocation: { uri, uriBaseId: '%SRCROOT%' }, region: { startLine: fileLineOf(notebook.file, cell, range.start.line) } } }],
        };
      }
      const fix = primaryFix(finding);
      return {
        ruleId: finding.code,
        ruleIndex: index.get(finding.code) ?? -1,
        level: SARIF_LEVEL[finding.severity],
        message: { text: finding.message },
        locations: [{ physicalLocation: { artifactLocation: { uri, uriBaseId: '%SRCROOT%' }, region: sarifRegion(finding.range) } }],
        ...(fix
          ? {
              fixes: [{
                description: { text: fix.safe ? fix.title : `${fix.title} (${t('unsafe')})` },
                artifactChanges: [{
                  artifactLocation: { uri, uriBaseId: '%SRCROOT%' },
                  replacements: fix.edits.map((edit) => ({ deletedRegion: sarifRegion(edit.range), insertedContent: { text: edit.newText } })),
                }],
              }],
            }
          : {}),
      };
    }),
  );
  const root = pathToFileURL(cwd.endsWith(path.sep) ? cwd : cwd + path.sep).href;
  return {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: [{
      tool: { driver: { name: 'oomguard', fullName: 'OOM Guard', version: VERSION, informationUri: 'https://github.com/oomguard/oomguard', rules } },
      originalUriBaseIds: { '%SRCROOT%': { uri: root } },
      results: sarifResults,
    }],
  };
}

const GITHUB_LEVEL: Record<Severity, 'error' | 'warning' | 'notice'> = { error: 'error', warning: 'warning', information: 'notice', hint: 'notice' };

/** Escapes for workflow commands: data escapes %, CR and LF; property values also `:` and `,`. */
function escapeData(value: string): string {
  return value.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

function escapeProperty(value: string): string {
  return escapeData(value).replace(/:/g, '%3A').replace(/,/g, '%2C');
}

/** GitHub Actions workflow annotations: `::warning file=…,line=…,col=…,endLine=…,endColumn=…,title=OOM101::message`. */
export function formatGithub(results: ReadonlyArray<CheckedFile>): string {
  let out = '';
  for (const { file, findings, notebook } of results) {
    for (const finding of findings) {
      if (notebook) {
        const { cell, range } = locateInNotebook(notebook, finding.range);
        const properties = [
          `file=${escapeProperty(file.split(path.sep).join('/'))}`,
          `line=${fileLineOf(notebook.file, cell, range.start.line)}`,
          `title=${escapeProperty(`${finding.code} (${cellLabel(cell)}:${range.start.line + 1}:${range.start.character + 1})`)}`,
        ].join(',');
        out += `::${GITHUB_LEVEL[finding.severity]} ${properties}::${escapeData(finding.message)}\n`;
        continue;
      }
      const r = finding.range;
      const properties = [
        `file=${escapeProperty(file.split(path.sep).join('/'))}`,
        `line=${r.start.line + 1}`,
        `col=${r.start.character + 1}`,
        `endLine=${r.end.line + 1}`,
        `endColumn=${r.end.character + 1}`,
        `title=${escapeProperty(finding.code)}`,
      ].join(',');
      out += `::${GITHUB_LEVEL[finding.severity]} ${properties}::${escapeData(finding.message)}\n`;
    }
  }
  return out;
}

export interface CodeStatistic {
  code: string;
  name: string;
  count: number;
  /** How many of them a safe fix (`--fix`) resolves. */
  fixable: number;
}

/** Counts per code, most frequent first (ties by code). */
export function statistics(results: ReadonlyArray<{ findings: Finding[] }>): CodeStatistic[] {
  const byCode = new Map<string, CodeStatistic>();
  for (const { findings } of results) {
    for (const finding of findings) {
      const entry = byCode.get(finding.code) ?? { code: finding.code, name: finding.name, count: 0, fixable: 0 };
      entry.count++;
      if (finding.fixes.some((fix) => fix.safe)) entry.fixable++;
      byCode.set(finding.code, entry);
    }
  }
  return [...byCode.values()].sort((a, b) => b.count - a.count || compareCodes(a.code, b.code));
}

export function formatStatistics(stats: readonly CodeStatistic[], skipped?: string): string {
  if (stats.length === 0) return (skipped ?? t('All checks passed.')) + '\n';
  const width = Math.max(...stats.map((s) => String(s.count).length));
  const lines = stats.map((s) => `${String(s.count).padStart(width)}\t${s.code}\t${s.fixable > 0 ? t('[{0} fixable]', s.fixable) + ' ' : ''}${s.name}`);
  return lines.join('\n') + '\n' + (skipped ? skipped + '\n' : '');
}
