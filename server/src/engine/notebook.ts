// Jupyter notebooks as one program. The code cells of a notebook, in order, run in one namespace, so the engine
// reads them as one Python text: each code cell's source, joined by a line break, with IPython's own syntax
// (line magics `%time`, shell lines `!pip`, help `obj?`, cell magics `%%bash`) blanked first. Blanking keeps every
// length and line break, so a position in the program is a (cell, line, character) position of the cell as the
// user sees it, with exact UTF-16 columns; findings, fixes and suppression comments move between the two by a row
// offset per cell. Markdown and raw cells take no room in the program but count in the cell numbers.
import { computeLineStarts } from './lines';
import type { Position, Range, TextEdit } from './types';

export type NotebookCellKind = 'code' | 'markdown' | 'raw';

export interface NotebookCellSource {
  kind: NotebookCellKind;
  /** The cell's source as the user sees it. */
  text: string;
}

/** Where one code cell sits in the program text. */
export interface CellSpan {
  /** The cell's index in the notebook, 0-based, counting every cell (markdown and raw included). */
  index: number;
  /** The program row of the cell's first line. */
  startLine: number;
  /** How many lines the cell has (its line breaks + 1). */
  lineCount: number;
  /** The program offset of the cell's first character. */
  startOffset: number;
  /** The cell's length (UTF-16 code units). */
  length: number;
  /** The length of the cell's last line: where the cell ends, as a cell position. */
  lastLineLength: number;
  /** A `%%` cell magic makes the whole cell something other than Python: it is blanked, and no fix may edit it. */
  cellMagic: boolean;
  /** Cell-relative rows blanked as IPython syntax (line magics, shell and help lines, their continuations). */
  magicLines: readonly number[];
}

export interface NotebookProgram {
  /** The code cells joined by line breaks, IPython syntax blanked: what the parser and the rules read. */
  text: string;
  /** The code cells in notebook order. */
  cells: CellSpan[];
}

/** The part of a notebook the rules need: which program rows each code cell holds. */
export interface CellRows {
  startLine: number;
  lineCount: number;
}

/** The result of blanking one cell. */
export interface BlankedCell {
  text: string;
  cellMagic: boolean;
  magicLines: number[];
}

const OPENERS = new Set(['(', '[', '{']);
const CLOSERS = new Set([')', ']', '}']);

/** Scanner state carried from line to line: open brackets, an open triple-quoted string, a backslash continuation. */
interface ScanState {
  depth: number;
  /** The quote that closes the open string (`'''` or `"""`), if a triple-quoted string runs past the line. */
  string: string | undefined;
  continued: boolean;
}

/** Scans one line of Python from `state`; returns the state after it and where a comment starts (if one does). */
function scanLine(line: string, state: ScanState): { next: ScanState; commentStart: number | undefined } {
  let depth = state.depth;
  let string = state.string;
  let commentStart: number | undefined;
  let i = 0;
  while (i < line.length) {
    const ch = line[i]!;
    if (string) {
      if (ch === '\\') {
        i += 2;
        continue;
      }
      if (line.startsWith(string, i)) {
        i += string.length;
        string = undefined;
        continue;
      }
      i++;
      continue;
    }
    if (ch === '#') {
      commentStart = i;
      break;
    }
    if (ch === '"' || ch === "'") {
      const triple = line.startsWith(ch.repeat(3), i);
      string = triple ? ch.repeat(3) : ch;
      i += triple ? 3 : 1;
      continue;
    }
    if (OPENERS.has(ch)) depth++;
    else if (CLOSERS.has(ch)) depth = Math.max(0, depth - 1);
    i++;
  }
  // A single-quoted string ends with its line (or is an error the parser reports); a triple-quoted one runs on.
  if (string && string.length === 1) string = undefined;
  const code = commentStart === undefined ? line : line.slice(0, commentStart);
  const continued = !string && /\\$/.test(code);
  return { next: { depth, string, continued }, commentStart };
}

/** `x = !ls`, `files = %sx ls`: IPython assigns a shell or magic result to names. */
const MAGIC_ASSIGNMENT = /^\s*[A-Za-z_][\w.]*(\s*,\s*[A-Za-z_][\w.]*)*\s*=\s*[%!]/;

/** Whether a line that starts a statement is IPython syntax rather than Python. */
function isIPythonLine(line: string, commentStart: number | undefined): boolean {
  const stripped = line.trimStart();
  if (/^[%!?]/.test(stripped)) return true;
  if (MAGIC_ASSIGNMENT.test(line)) return true;
  // `obj?`, `obj??`: help.
  const code = (commentStart === undefined ? line : line.slice(0, commentStart)).trimEnd();
  return /[\w)\]]\?{1,2}$/.test(code);
}

/** Same-length replacement of a line's characters (UTF-16 units) by spaces. */
function spaces(line: string): string {
  return ' '.repeat(line.length);
}

/**
 * A same-length statement in place of a blanked line magic, so that a block whose only statement was a magic
 * (`for f in files:` / `    !cp {f} out/`) stays valid Python: `pass` where it fits, else `0`.
 */
function placeholder(line: string): string {
  const indent = /^[ \t]*/.exec(line)![0];
  const room = line.length - indent.length;
  const statement = room >= 4 ? 'pass' : '0';
  return indent + statement + ' '.repeat(room - statement.length);
}

/** Splits a text into its lines and the line breaks after them (`\n`, `\r\n` or a lone `\r`). */
function linesWithBreaks(text: string): Array<{ line: string; eol: string }> {
  const out: Array<{ line: string; eol: string }> = [];
  const pattern = /\r\n|\r|\n/g;
  let start = 0;
  for (let match = pattern.exec(text); match; match = pattern.exec(text)) {
    out.push({ line: text.slice(start, match.index), eol: match[0] });
    start = match.index + match[0].length;
  }
  out.push({ line: text.slice(start), eol: '' });
  return out;
}

/**
 * Blanks the IPython syntax of one code cell, keeping every length and line break: a `%%` cell magic on the
 * cell's first non-blank line blanks the whole cell; a line magic, shell line (`!cmd`), magic or shell assignment
 * (`x = !ls`) or help line (`obj?`) that starts a statement becomes `pass` (with its backslash continuations
 * blanked). A `%` inside brackets or a string is Python's own operator or text and stays.
 */
export function blankMagics(source: string): BlankedCell {
  const lines = linesWithBreaks(source);
  const firstCode = lines.find(({ line }) => line.trim() !== '');
  if (firstCode && firstCode.line.trimStart().startsWith('%%')) {
    return { text: source.replace(/[^\r\n]/g, ' '), cellMagic: true, magicLines: lines.map((_, i) => i) };
  }
  if (!/[%!?]/.test(source)) return { text: source, cellMagic: false, magicLines: [] };
  let state: ScanState = { depth: 0, string: undefined, continued: false };
  const magicLines: number[] = [];
  let out = '';
  let magicContinues = false;
  lines.forEach(({ line, eol }, row) => {
    const { next, commentStart } = scanLine(line, state);
    if (magicContinues) {
      // A backslash at the end of a magic line continues the magic on the next line.
      magicLines.push(row);
      out += spaces(line) + eol;
      magicContinues = /\\$/.test(line);
      return;
    }
    const startsStatement = state.depth === 0 && !state.string && !state.continued;
    if (startsStatement && line.trim() !== '' && isIPythonLine(line, commentStart)) {
      magicLines.push(row);
      out += placeholder(line) + eol;
      magicContinues = /\\$/.test(line);
      state = { depth: 0, string: undefined, continued: false };
      return;
    }
    out += line + eol;
    state = next;
  });
  return { text: out, cellMagic: false, magicLines };
}

/** One cell made ready to join: its program text and what the row map needs. A cache can keep it while the cell is unchanged. */
export interface PreparedCell {
  /** The cell's text in the program: IPython syntax blanked, a trailing lone `\r` written as `\n`. */
  text: string;
  lineCount: number;
  lastLineLength: number;
  cellMagic: boolean;
  magicLines: readonly number[];
}

/** Blanks a code cell and measures its lines (see joinCells). */
export function prepareCell(source: string): PreparedCell {
  const blanked = blankMagics(source);
  let text = blanked.text;
  // Written as `\n`, a trailing lone `\r` cannot merge with the separator into one CRLF line break.
  if (text.endsWith('\r')) text = text.slice(0, -1) + '\n';
  const starts = computeLineStarts(source);
  return { text, lineCount: starts.length, lastLineLength: source.length - starts[starts.length - 1]!, cellMagic: blanked.cellMagic, magicLines: blanked.magicLines };
}

/**
 * Joins the code cells of a notebook into one program. Cells are separated by `\n`; a cell that ends with a lone
 * `\r` has it written as `\n` in the program (same length), so that the separator cannot merge with it into one
 * CRLF line break and every cell keeps its own rows. `prepare` may return a cached preparation of a cell's text.
 */
export function joinCells(cells: readonly NotebookCellSource[], prepare: (cell: NotebookCellSource, index: number) => PreparedCell = (cell) => prepareCell(cell.text)): NotebookProgram {
  const spans: CellSpan[] = [];
  const parts: string[] = [];
  let offset = 0;
  let line = 0;
  cells.forEach((cell, index) => {
    if (cell.kind !== 'code') return;
    if (parts.length > 0) {
      parts.push('\n');
      offset += 1;
    }
    const prepared = prepare(cell, index);
    spans.push({
      index,
      startLine: line,
      lineCount: prepared.lineCount,
      startOffset: offset,
      length: prepared.text.length,
      lastLineLength: prepared.lastLineLength,
      cellMagic: prepared.cellMagic,
      magicLines: prepared.magicLines,
    });
    parts.push(prepared.text);
    offset += prepared.text.length;
    line += prepared.lineCount;
  });
  return { text: parts.join(''), cells: spans };
}

/** The code cell that holds a program row, if any. */
export function cellAtLine(cells: readonly CellSpan[], line: number): CellSpan | undefined {
  let low = 0;
  let high = cells.length - 1;
  while (low <= high) {
    const mid = (low + high) >> 1;
    const cell = cells[mid]!;
    if (line < cell.startLine) high = mid - 1;
    else if (line >= cell.startLine + cell.lineCount) low = mid + 1;
    else return cell;
  }
  return undefined;
}

/** A program position as a position in its cell. */
export function toCellPosition(cells: readonly CellSpan[], position: Position): { cell: CellSpan; position: Position } | undefined {
  const cell = cellAtLine(cells, position.line);
  return cell && { cell, position: { line: position.line - cell.startLine, character: position.character } };
}

/** A position in a cell as a program position. */
export function toProgramPosition(cell: CellSpan, position: Position): Position {
  // Past the cell's last line: its end (the separator that follows belongs to no cell).
  if (position.line >= cell.lineCount) return { line: cell.startLine + cell.lineCount - 1, character: cell.lastLineLength };
  return { line: cell.startLine + position.line, character: position.character };
}

export function toProgramRange(cell: CellSpan, range: Range): Range {
  return { start: toProgramPosition(cell, range.start), end: toProgramPosition(cell, range.end) };
}

/**
 * A program range as a range of one cell, or undefined where it crosses from one cell into another. A range that
 * ends at the start of the row after its cell (a deleted last line) ends at the end of the cell instead.
 */
export function toCellRange(cells: readonly CellSpan[], range: Range): { cell: CellSpan; range: Range } | undefined {
  const start = toCellPosition(cells, range.start);
  if (!start) return undefined;
  const cell = start.cell;
  const endRow = range.end.line - cell.startLine;
  let end: Position;
  if (endRow < cell.lineCount) end = { line: endRow, character: range.end.character };
  else if (endRow === cell.lineCount && range.end.character === 0) end = { line: cell.lineCount - 1, character: cell.lastLineLength };
  else return undefined;
  return { cell, range: { start: start.position, end } };
}

/** The edits of one fix, grouped by the cell they edit (in notebook order). */
export interface CellEdits {
  cell: CellSpan;
  edits: TextEdit[];
}

/**
 * A fix's program edits as edits of cells, or undefined where one of them cannot be made in a cell: it crosses a
 * cell boundary, or it edits a cell that a `%%` magic makes non-Python.
 */
export function toCellEdits(cells: readonly CellSpan[], edits: readonly TextEdit[]): CellEdits[] | undefined {
  const byCell = new Map<number, CellEdits>();
  for (const edit of edits) {
    const mapped = toCellRange(cells, edit.range);
    if (!mapped || mapped.cell.cellMagic) return undefined;
    let entry = byCell.get(mapped.cell.index);
    if (!entry) {
      entry = { cell: mapped.cell, edits: [] };
      byCell.set(mapped.cell.index, entry);
    }
    entry.edits.push({ range: mapped.range, newText: edit.newText });
  }
  return [...byCell.values()].sort((a, b) => a.cell.index - b.cell.index);
}

/** The rows the rules read per code cell. */
export function cellRows(program: Pick<NotebookProgram, 'cells'>): CellRows[] {
  return program.cells.map((cell) => ({ startLine: cell.startLine, lineCount: cell.lineCount }));
}
