// A document's text as the pieces its edits left: a keystroke makes the next version from the last one's pieces and
// the typed text, without copying the whole text. V8 copies a string made of parts into one string the first time it
// is read (flattening): for a 20,000-line script that is 1.1 MB of UTF-16 per keystroke, 3.4 ms here (most of it the
// kernel mapping fresh pages for the copy), and the copy of the version before became garbage that only a full
// collection frees (it set the pace of full collections while typing). The whole text is made once something asks
// for it (`text`): a full parse, a fix, a feature run while typing pauses.

/**
 * Past this many pieces an edit makes the whole text (each read looks its piece up by binary search). Edits at one
 * place keep few (neighbouring small pieces are joined); edits scattered over the file add two each, and a pause in
 * typing usually makes the whole text anyway (the memory estimate sends it to its worker).
 */
const MAX_PIECES = 256;

/** Neighbouring pieces up to this length together are joined (characters typed one after another make one piece). */
const JOINED_PIECE_LENGTH = 256;

/**
 * A slice this long (or longer) is read from the whole text, made once and kept: V8 would flatten a slice over
 * several pieces on every read of it, and one that long is usually asked again (a node as long as the file).
 */
const WHOLE_TEXT_SLICE = 1 << 16;

/** A text as one string, or as pieces (an edited document's): what the analysis and the fixes read. */
export type TextLike = string | PieceText;

/** The whole text of either form. */
export function wholeText(text: TextLike): string {
  return typeof text === 'string' ? text : text.text;
}

/** How many carriage returns a string holds (most files: none, found by one native search). */
function carriageReturnsIn(text: string): number {
  let count = 0;
  for (let i = text.indexOf('\r'); i >= 0; i = text.indexOf('\r', i + 1)) count++;
  return count;
}

export class PieceText {
  /** The pieces in order; one (the whole text) once it has been made. */
  private pieces: readonly string[];
  /** Where each piece starts in the text. */
  private starts: readonly number[];
  private whole: string | undefined;

  private constructor(
    pieces: readonly string[],
    starts: readonly number[],
    readonly length: number,
    /** How many `\r` the text holds: without any, its lines end in `\n` alone (lineEnding asks without reading it). */
    readonly carriageReturns: number,
  ) {
    this.pieces = pieces;
    this.starts = starts;
    this.whole = pieces.length === 1 ? pieces[0] : pieces.length === 0 ? '' : undefined;
  }

  static of(text: string): PieceText {
    return new PieceText([text], [0], text.length, carriageReturnsIn(text));
  }

  /** The whole text, as one string (made on first use, then kept). */
  get text(): string {
    return this.whole ?? this.makeWhole();
  }

  private makeWhole(): string {
    const whole = this.pieces.join('');
    this.whole = whole;
    this.pieces = [whole];
    this.starts = [0];
    return whole;
  }

  /** Whether the whole text is made (reading `text` costs nothing). */
  get isWhole(): boolean {
    return this.whole !== undefined;
  }

  /** String.prototype.slice of the text, read from the pieces it spans. */
  slice(start = 0, end = this.length): string {
    if (this.whole !== undefined) return this.whole.slice(start, end);
    const length = this.length;
    const from = start < 0 ? Math.max(0, length + start) : Math.min(start, length);
    const to = end < 0 ? Math.max(0, length + end) : Math.min(end, length);
    if (to <= from) return '';
    if (to - from >= WHOLE_TEXT_SLICE) return this.text.slice(from, to);
    let index = this.pieceAt(from);
    const pieceStart = this.starts[index]!;
    const piece = this.pieces[index]!;
    if (to <= pieceStart + piece.length) return piece.slice(from - pieceStart, to - pieceStart);
    let result = piece.slice(from - pieceStart);
    for (index++; index < this.pieces.length && this.starts[index]! < to; index++) {
      const next = this.pieces[index]!;
      result += next.slice(0, to - this.starts[index]!);
    }
    return result;
  }

  /** String.prototype.charCodeAt of the text (NaN outside it). */
  charCodeAt(index: number): number {
    if (this.whole !== undefined) return this.whole.charCodeAt(index);
    if (!(index >= 0 && index < this.length)) return NaN;
    const piece = this.pieceAt(index);
    return this.pieces[piece]!.charCodeAt(index - this.starts[piece]!);
  }

  /** The text with [start, end) replaced by `inserted`: a new version; this one stays as it is. */
  replaced(start: number, end: number, inserted: string): PieceText {
    const pieces: string[] = [];
    const starts: number[] = [];
    const push = (piece: string) => {
      if (piece.length === 0) return;
      const last = pieces.length - 1;
      if (last >= 0 && pieces[last]!.length + piece.length <= JOINED_PIECE_LENGTH) {
        pieces[last] += piece;
        return;
      }
      starts.push(starts.length === 0 ? 0 : starts[starts.length - 1]! + pieces[pieces.length - 1]!.length);
      pieces.push(piece);
    };
    const count = this.pieces.length;
    let index = 0;
    // The pieces wholly before the edit, then what comes before it of the piece it starts in.
    for (; index < count && this.starts[index]! + this.pieces[index]!.length <= start; index++) push(this.pieces[index]!);
    if (index < count) push(this.pieces[index]!.slice(0, start - this.starts[index]!));
    push(inserted);
    // What comes after the edit of the piece it ends in, then the pieces wholly after it.
    while (index < count && this.starts[index]! + this.pieces[index]!.length <= end) index++;
    if (index < count) push(this.pieces[index]!.slice(end - this.starts[index]!));
    for (index++; index < count; index++) push(this.pieces[index]!);
    const carriageReturns = this.carriageReturns === 0 && !inserted.includes('\r') ? 0
      : this.carriageReturns - carriageReturnsIn(this.slice(start, end)) + carriageReturnsIn(inserted);
    const next = new PieceText(pieces, starts, this.length - (end - start) + inserted.length, carriageReturns);
    if (pieces.length > MAX_PIECES) next.makeWhole();
    return next;
  }

  /** The index of the piece holding `offset` (0 <= offset < length): the last one starting at or before it. */
  private pieceAt(offset: number): number {
    const starts = this.starts;
    let low = 0;
    let high = starts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (starts[mid]! <= offset) low = mid;
      else high = mid - 1;
    }
    return low;
  }
}
