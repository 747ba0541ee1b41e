// Suppression comments, as flake8 and ruff users write them:
// - `# noqa` and `# noqa: OOM101, OOM104` at the end of the reported line;
// - `# oomguard: noqa: OOM106` (or a bare `# oomguard: noqa`) on a line of its own, for the whole file.
// A `# noqa: OOM1xx` that suppresses nothing is itself reported, as OOM100 unused-noqa (ruff's RUF100), with a fix
// that removes it. OOM100 is an engine check, not a rule: it is not in the spec's rule table (rules/codes.ts).
import { t } from '../l10n';
import { RULE_CODES } from '../rules/codes';
import type { Finding, Severity, TextEdit } from './types';

const NOQA = /#\s*noqa(?::\s*([A-Z]+[0-9]+(?:\s*,\s*[A-Z]+[0-9]+)*))?/i;
const FILE_NOQA = /^\s*#\s*oomguard\s*:\s*noqa\b(?:\s*:\s*([A-Z]+[0-9]+(?:\s*,\s*[A-Z]+[0-9]+)*))?/i;

export const UNUSED_NOQA = { code: 'OOM100', name: 'unused-noqa', defaultSeverity: 'information' as Severity } as const;

const KNOWN_CODES = new Set<string>(RULE_CODES.map((rule) => rule.code));

export interface NoqaComment {
  start: number;
  end: number;
  /** The listed codes, or undefined for a bare `# noqa` that silences everything. */
  codes: string[] | undefined;
}

function splitCodes(list: string | undefined): string[] | undefined {
  return list?.split(',').map((code) => code.trim().toUpperCase());
}

export function findNoqa(line: string): NoqaComment | undefined {
  // `# oomguard: noqa: ...` is the file-level form, not a line suppression.
  if (FILE_NOQA.test(line)) return undefined;
  const match = NOQA.exec(line);
  if (!match) return undefined;
  return { start: match.index, end: match.index + match[0].length, codes: splitCodes(match[1]) };
}

/** A file-level `# oomguard: noqa[: CODES]` comment on a line of its own. */
export function findFileNoqa(line: string): NoqaComment | undefined {
  const match = FILE_NOQA.exec(line);
  if (!match) return undefined;
  const start = line.indexOf('#');
  return { start, end: match[0].length, codes: splitCodes(match[1]) };
}

export function isSuppressed(line: string, code: string): boolean {
  const noqa = findNoqa(line);
  return !!noqa && (!noqa.codes || noqa.codes.includes(code));
}

interface Tracked {
  line: number;
  comment: NoqaComment;
  fileLevel: boolean;
  /** Codes this comment silenced in this run. */
  used: Set<string>;
}

/**
 * The suppression comments of one document version. `suppresses()` answers for a finding and remembers which
 * comment silenced it, so that `unusedNoqaFindings()` can report the codes that silenced nothing.
 */
export class Suppressions {
  private readonly fileLevel: Tracked[] = [];
  private readonly byLine = new Map<number, Tracked>();

  /**
   * `lines` by row: every line of the file, or (incremental analysis) only the rows of the statements analysed, in a
   * map: a sparse array reaching row 15,000 is walked index by index.
   */
  constructor(private readonly lines: readonly string[] | ReadonlyMap<number, string>) {
    lines.forEach((text: string, line: number) => {
      // Cheap pre-filter: most lines have no comment at all.
      if (!text.includes('#')) return;
      const file = findFileNoqa(text);
      if (file) {
        this.fileLevel.push({ line, comment: file, fileLevel: true, used: new Set() });
        return;
      }
      const noqa = findNoqa(text);
      if (noqa) this.byLine.set(line, { line, comment: noqa, fileLevel: false, used: new Set() });
    });
  }

  /** Whether a finding of `code` reported at `line` is silenced; file-level comments apply first. */
  suppresses(line: number, code: string): boolean {
    for (const tracked of this.fileLevel) {
      if (!tracked.comment.codes || tracked.comment.codes.includes(code)) {
        tracked.used.add(code);
        return true;
      }
    }
    const tracked = this.byLine.get(line);
    if (tracked && (!tracked.comment.codes || tracked.comment.codes.includes(code))) {
      tracked.used.add(code);
      return true;
    }
    return false;
  }

  /**
   * OOM100 for every listed OOM code that silenced nothing. Only codes of rules that ran can be judged (a rule
   * turned off by the configuration finds nothing to silence), and bare `# noqa` comments and other linters'
   * codes (`# noqa: F401`) are left alone: they may be there for flake8 or ruff.
   */
  unusedNoqaFindings(ran: (code: string) => boolean, severity: Severity = UNUSED_NOQA.defaultSeverity): Finding[] {
    const findings: Finding[] = [];
    for (const tracked of [...this.fileLevel, ...this.byLine.values()]) {
      const codes = tracked.comment.codes;
      if (!codes) continue;
      const unused = codes.filter((code) => KNOWN_CODES.has(code) && ran(code) && !tracked.used.has(code));
      if (unused.length === 0) continue;
      const kept = codes.filter((code) => !unused.includes(code));
      const text = (this.lines instanceof Map ? this.lines.get(tracked.line) : (this.lines as readonly string[])[tracked.line]) ?? '';
      const range = { start: { line: tracked.line, character: tracked.comment.start }, end: { line: tracked.line, character: tracked.comment.end } };
      findings.push({
        code: UNUSED_NOQA.code,
        name: UNUSED_NOQA.name,
        severity,
        range,
        message: tracked.fileLevel
          ? t('Unused file-level noqa: {0} reports nothing in this file. Remove it from the comment.', unused.join(', '))
          : t('Unused noqa: {0} reports nothing on this line. Remove it from the comment.', unused.join(', ')),
        fixes: [{ title: kept.length === 0 ? t('Remove the unused noqa comment') : t('Remove {0} from the noqa comment', unused.join(', ')), safe: true, preferred: true, edits: [removalEdit(tracked, text, kept)] }],
      });
    }
    return findings;
  }
}

/** The edit that drops unused codes from a noqa comment, or the comment itself (and the spaces before it). */
function removalEdit(tracked: Tracked, text: string, kept: string[]): TextEdit {
  const { line, comment } = tracked;
  if (kept.length > 0) {
    const prefix = tracked.fileLevel ? '# oomguard: noqa: ' : '# noqa: ';
    return { range: { start: { line, character: comment.start }, end: { line, character: comment.end } }, newText: prefix + kept.join(', ') };
  }
  // A file-level comment stands on its own line: the line goes.
  if (tracked.fileLevel && text.slice(comment.end).trim() === '') {
    return { range: { start: { line, character: 0 }, end: { line: line + 1, character: 0 } }, newText: '' };
  }
  let start = comment.start;
  while (start > 0 && (text[start - 1] === ' ' || text[start - 1] === '\t')) start--;
  // Text after the noqa (`# noqa: OOM101 keep this`) stays as a comment.
  const rest = text.slice(comment.end).trim();
  return { range: { start: { line, character: start }, end: { line, character: comment.end } }, newText: rest && !rest.startsWith('#') ? '  #' : '' };
}
