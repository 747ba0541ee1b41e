// `# noqa` and `# noqa: OOM101, OOM104` at the end of the reported line, as flake8 and ruff users write them.
const NOQA = /#\s*noqa(?::\s*([A-Z]+[0-9]+(?:\s*,\s*[A-Z]+[0-9]+)*))?/i;

export function isSuppressed(line: string, code: string): boolean {
  const match = NOQA.exec(line);
  if (!match) return false;
  if (!match[1]) return true;
  return match[1].split(',').some((listed) => listed.trim().toUpperCase() === code);
}
