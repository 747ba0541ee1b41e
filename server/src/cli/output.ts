// How findings are printed: ruff-like text and the JSON objects of the CLI contract (1-based lines and columns).
import type { Finding, Fix, TextEdit } from '../engine/types';
import { t } from '../l10n';

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

export function formatText(results: ReadonlyArray<{ file: string; findings: Finding[] }>, count: number): string {
  let out = '';
  for (const { file, findings } of results) {
    for (const finding of findings) {
      out += `${file}:${finding.range.start.line + 1}:${finding.range.start.character + 1}: ${finding.code} ${finding.message}\n`;
    }
  }
  out += count === 0 ? t('All checks passed.') + '\n' : t('Found {0} finding(s).', count) + '\n';
  return out;
}
