// How findings are printed: ruff-like text and the JSON objects of the CLI contract (1-based lines and columns).
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { UNUSED_NOQA } from '../engine/suppression';
import type { Finding, Fix, Range, Severity, TextEdit } from '../engine/types';
import { t } from '../l10n';
import { ruleDocUrl } from '../protocol';
import { RULE_CODES } from '../rules/codes';
import { VERSION } from '../version';

export interface JsonEdit {
  line: number;
  column: number;
  endLine: number;
  endColumn: number;
  newText: string;
}

export interface JsonFinding {
  file: string;
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

export function findingToJson(file: string, finding: Finding): JsonFinding {
  const fix = primaryFix(finding);
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

export function formatText(results: ReadonlyArray<{ file: string; findings: Finding[] }>, count: number, skipped: readonly string[] = []): string {
  let out = '';
  for (const { file, findings } of results) {
    for (const finding of findings) {
      out += `${file}:${finding.range.start.line + 1}:${finding.range.start.character + 1}: ${finding.code} ${finding.message}\n`;
    }
  }
  // A run that skipped a file never says that everything passed: it names what was not checked.
  if (skipped.length > 0) out += (count === 0 ? '' : t('Found {0} finding(s).', count) + '\n') + t('{0} file(s) not checked: {1}', skipped.length, skipped.join(', ')) + '\n';
  else out += count === 0 ? t('All checks passed.') + '\n' : t('Found {0} finding(s).', count) + '\n';
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
export function toSarif(results: ReadonlyArray<{ file: string; findings: Finding[] }>, cwd: string): object {
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
  const sarifResults = results.flatMap(({ file, findings }) =>
    findings.map((finding) => {
      const uri = artifactUri(file);
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
export function formatGithub(results: ReadonlyArray<{ file: string; findings: Finding[] }>): string {
  let out = '';
  for (const { file, findings } of results) {
    for (const finding of findings) {
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
  return [...byCode.values()].sort((a, b) => b.count - a.count || a.code.localeCompare(b.code));
}

export function formatStatistics(stats: readonly CodeStatistic[]): string {
  if (stats.length === 0) return t('All checks passed.') + '\n';
  const width = Math.max(...stats.map((s) => String(s.count).length));
  const lines = stats.map((s) => `${String(s.count).padStart(width)}\t${s.code}\t${s.fixable > 0 ? t('[{0} fixable]', s.fixable) + ' ' : ''}${s.name}`);
  return lines.join('\n') + '\n';
}
