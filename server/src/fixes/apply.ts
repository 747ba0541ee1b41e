// Applies text edits to a document. Edits are LSP-shaped (0-based lines, UTF-16 characters); overlapping edits
// from different fixes are skipped rather than merged, so an applied fix is always one that was reviewed alone.
import { computeLineStarts, offsetAt } from '../engine/documents';
import type { Finding, Fix, TextEdit } from '../engine/types';

interface OffsetEdit {
  start: number;
  end: number;
  newText: string;
}

function toOffsets(text: string, lineStarts: number[], edit: TextEdit): OffsetEdit {
  return { start: offsetAt(text, lineStarts, edit.range.start), end: offsetAt(text, lineStarts, edit.range.end), newText: edit.newText };
}

export function applyEdits(text: string, edits: readonly TextEdit[]): string {
  const lineStarts = computeLineStarts(text);
  const sorted = edits.map((edit) => toOffsets(text, lineStarts, edit)).sort((a, b) => b.start - a.start || b.end - a.end);
  let result = text;
  for (const edit of sorted) result = result.slice(0, edit.start) + edit.newText + result.slice(edit.end);
  return result;
}

/** The fix `--fix` applies for a finding: its first safe fix, if any. */
export function safeFix(finding: Finding): Fix | undefined {
  return finding.fixes.find((fix) => fix.safe);
}

/**
 * The edits of the given fixes, in order, skipping a fix whose edits overlap an edit already taken (the next run
 * picks it up), so that each applied fix is one that was reviewed alone. `--fix` and fix-all both choose this way.
 */
export function chooseFixEdits(text: string, fixes: ReadonlyArray<Pick<Fix, 'edits'>>): { edits: TextEdit[]; applied: number } {
  const lineStarts = computeLineStarts(text);
  const taken: OffsetEdit[] = [];
  const edits: TextEdit[] = [];
  let applied = 0;
  for (const fix of fixes) {
    const offsets = fix.edits.map((edit) => toOffsets(text, lineStarts, edit));
    const overlaps = offsets.some((a) => taken.some((b) => (a.start < b.end && b.start < a.end) || (a.start === b.start && a.end === b.end)));
    if (overlaps) continue;
    taken.push(...offsets);
    edits.push(...fix.edits);
    applied++;
  }
  return { edits, applied };
}

/** Applies one fix per finding, skipping any whose edits overlap an edit already taken. Returns the new text. */
export function applyFixes(text: string, fixes: readonly Fix[]): { text: string; applied: number } {
  const { edits, applied } = chooseFixEdits(text, fixes);
  return { text: applyEdits(text, edits), applied };
}
