// Applies text edits to a document. Edits are LSP-shaped (0-based lines, UTF-16 characters); overlapping edits
// from different fixes are skipped rather than merged, so an applied fix is always one that was reviewed alone.
import { computeLineStarts, offsetAt } from '../engine/documents';
import type { Finding, Fix, TextEdit } from '../engine/types';
import { lowerBoundBy } from '../engine/syntax';

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
  // Applied last to first, each edit lies before the ones already made, so the text is the untouched pieces and the
  // new texts in order: joined once, not copied once per edit. Edits that overlap are made one after another.
  const pieces: string[] = [];
  let next = text.length;
  for (const edit of sorted) {
    if (edit.end > next || edit.start > edit.end) return applyInTurn(text, sorted);
    pieces.push(text.slice(edit.end, next), edit.newText);
    next = edit.start;
  }
  pieces.push(text.slice(0, next));
  return pieces.reverse().join('');
}

function applyInTurn(text: string, sorted: readonly OffsetEdit[]): string {
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
  const taken = new TakenEdits();
  const edits: TextEdit[] = [];
  let applied = 0;
  for (const fix of fixes) {
    const offsets = fix.edits.map((edit) => toOffsets(text, lineStarts, edit));
    if (offsets.some((edit) => taken.overlaps(edit))) continue;
    for (const edit of offsets) taken.add(edit);
    edits.push(...fix.edits);
    applied++;
  }
  return { edits, applied };
}

/**
 * The edits taken so far, sorted by start, with the length of the longest: whether a new edit overlaps one is read
 * from the few that start near it, not from every edit taken (a file with a fix per line takes thousands).
 */
class TakenEdits {
  private readonly byStart: OffsetEdit[] = [];
  private longest = 0;

  /** Overlapping ranges, or the same range (two insertions at one place). */
  overlaps(a: OffsetEdit): boolean {
    // An edit that starts more than `longest` before `a` ends before it; one that starts after `a` ends is past it.
    for (let i = this.firstStartingAt(a.start - this.longest); i < this.byStart.length && this.byStart[i]!.start <= a.end; i++) {
      const b = this.byStart[i]!;
      if ((a.start < b.end && b.start < a.end) || (a.start === b.start && a.end === b.end)) return true;
    }
    return false;
  }

  add(edit: OffsetEdit): void {
    // Fixes come in document order, so an edit usually goes at the end.
    let index = this.byStart.length;
    if (index > 0 && this.byStart[index - 1]!.start > edit.start) index = this.firstStartingAt(edit.start + 1);
    this.byStart.splice(index, 0, edit);
    this.longest = Math.max(this.longest, edit.end - edit.start);
  }

  /** The index of the first edit that starts at or after `offset`. */
  private firstStartingAt(offset: number): number {
    return lowerBoundBy(this.byStart, offset, (edit) => edit.start);
  }
}

/** Applies one fix per finding, skipping any whose edits overlap an edit already taken. Returns the new text. */
export function applyFixes(text: string, fixes: readonly Fix[]): { text: string; applied: number } {
  const { edits, applied } = chooseFixEdits(text, fixes);
  return { text: applyEdits(text, edits), applied };
}
