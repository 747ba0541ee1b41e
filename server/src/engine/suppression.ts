// `# noqa` and `# noqa: OOM101, OOM104` at the end of the reported line, as flake8 and ruff users write them.
const NOQA = /#\s*noqa(?::\s*([A-Z]+[0-9]+(?:\s*,\s*[A-Z]+[0-9]+)*))?/i;

export interface NoqaComment {
  start: number;
  end: number;
  /** The listed codes, or undefined for a bare `# noqa` that silences everything. */
  codes: string[] | undefined;
}

export function findNoqa(line: string): NoqaComment | undefined {
  const match = NOQA.exec(line);
  if (!match) return undefined;
  return {
    start: match.index,
    end: match.index + match[0].length,
    codes: match[1]?.split(',').map((code) => code.trim().toUpperCase()),
  };
}

export function isSuppressed(line: string, code: string): boolean {
  const noqa = findNoqa(line);
  return !!noqa && (!noqa.codes || noqa.codes.includes(code));
}
