// Jupyter notebook files (.ipynb, nbformat 4) for the command line: read the cells, and write changed cell sources
// back without touching anything else. The file is parsed by a small JSON reader that remembers where each value
// lies, so that `--fix` replaces only the `source` values of the cells it changed and every other byte (outputs,
// metadata, indentation, key order, line endings, the final newline) stays as it was.
import { t } from '../l10n';
import { joinCells } from '../engine/notebook';
import type { NotebookCellKind, NotebookCellSource, NotebookProgram } from '../engine/notebook';

/** A JSON value and the offsets (UTF-16) of its text in the file. */
export type JsonNode =
  | { kind: 'object'; start: number; end: number; entries: Array<{ key: string; keyStart: number; value: JsonNode }> }
  | { kind: 'array'; start: number; end: number; items: JsonNode[] }
  | { kind: 'string'; start: number; end: number; value: string }
  | { kind: 'number'; start: number; end: number; value: number }
  | { kind: 'literal'; start: number; end: number; value: boolean | null };

class JsonSyntaxError extends Error {
  constructor(readonly offset: number, message: string) {
    super(message);
  }
}

const ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

/** A JSON reader (RFC 8259) that keeps every value's place in the text. */
class JsonReader {
  private index = 0;
  private readonly plain = /[^"\\\u0000-\u001f]*/y;

  constructor(private readonly text: string) {
    // A byte order mark is not JSON, but editors write one.
    if (text.charCodeAt(0) === 0xfeff) this.index = 1;
  }

  read(): JsonNode {
    const value = this.value();
    this.skipWhitespace();
    if (this.index < this.text.length) throw new JsonSyntaxError(this.index, t('unexpected text after the end of the JSON value'));
    return value;
  }

  private skipWhitespace(): void {
    const text = this.text;
    while (this.index < text.length) {
      const ch = text.charCodeAt(this.index);
      if (ch !== 32 && ch !== 9 && ch !== 10 && ch !== 13) break;
      this.index++;
    }
  }

  private unexpected(): JsonSyntaxError {
    if (this.index >= this.text.length) return new JsonSyntaxError(this.index, t('unexpected end of the file'));
    return new JsonSyntaxError(this.index, t('unexpected character {0}', JSON.stringify(this.text[this.index])));
  }

  private value(): JsonNode {
    this.skipWhitespace();
    const ch = this.text[this.index];
    if (ch === '{') return this.object();
    if (ch === '[') return this.array();
    if (ch === '"') {
      const start = this.index;
      const value = this.string();
      return { kind: 'string', start, end: this.index, value };
    }
    const start = this.index;
    for (const [word, value] of [['true', true], ['false', false], ['null', null]] as const) {
      if (this.text.startsWith(word, start)) {
        this.index += word.length;
        return { kind: 'literal', start, end: this.index, value };
      }
    }
    const number = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
    number.lastIndex = start;
    const match = number.exec(this.text);
    if (match && match[0].length > 0) {
      this.index += match[0].length;
      return { kind: 'number', start, end: this.index, value: Number(match[0]) };
    }
    throw this.unexpected();
  }

  private object(): JsonNode {
    const start = this.index++;
    const entries: Array<{ key: string; keyStart: number; value: JsonNode }> = [];
    this.skipWhitespace();
    if (this.text[this.index] === '}') {
      this.index++;
      return { kind: 'object', start, end: this.index, entries };
    }
    for (;;) {
      this.skipWhitespace();
      if (this.text[this.index] !== '"') throw this.unexpected();
      const keyStart = this.index;
      const key = this.string();
      this.skipWhitespace();
      if (this.text[this.index] !== ':') throw this.unexpected();
      this.index++;
      entries.push({ key, keyStart, value: this.value() });
      this.skipWhitespace();
      const next = this.text[this.index];
      this.index++;
      if (next === '}') return { kind: 'object', start, end: this.index, entries };
      if (next !== ',') {
        this.index--;
        throw this.unexpected();
      }
    }
  }

  private array(): JsonNode {
    const start = this.index++;
    const items: JsonNode[] = [];
    this.skipWhitespace();
    if (this.text[this.index] === ']') {
      this.index++;
      return { kind: 'array', start, end: this.index, items };
    }
    for (;;) {
      items.push(this.value());
      this.skipWhitespace();
      const next = this.text[this.index];
      this.index++;
      if (next === ']') return { kind: 'array', start, end: this.index, items };
      if (next !== ',') {
        this.index--;
        throw this.unexpected();
      }
    }
  }

  private string(): string {
    const text = this.text;
    this.index++; // the opening quote
    let out = '';
    for (;;) {
      this.plain.lastIndex = this.index;
      const chunk = this.plain.exec(text)![0];
      out += chunk;
      this.index += chunk.length;
      const ch = text[this.index];
      if (ch === '"') {
        this.index++;
        return out;
      }
      if (ch === undefined) throw new JsonSyntaxError(this.index, t('unterminated string'));
      if (ch !== '\\') throw new JsonSyntaxError(this.index, t('control character in a string'));
      const escape = text[this.index + 1];
      if (escape === 'u') {
        const hex = text.slice(this.index + 2, this.index + 6);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw new JsonSyntaxError(this.index, t('invalid escape in a string'));
        out += String.fromCharCode(parseInt(hex, 16));
        this.index += 6;
      } else if (escape !== undefined && escape in ESCAPES) {
        out += ESCAPES[escape];
        this.index += 2;
      } else {
        throw new JsonSyntaxError(this.index, t('invalid escape in a string'));
      }
    }
  }
}

/** Line and column (1-based) of an offset, for messages. */
function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text[i] === '\n') {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

export function parseJson(text: string): JsonNode {
  return new JsonReader(text).read();
}

function member(node: JsonNode | undefined, key: string): JsonNode | undefined {
  return node?.kind === 'object' ? node.entries.find((entry) => entry.key === key)?.value : undefined;
}

export interface NotebookFileCell extends NotebookCellSource {
  /** The cell's `source` value in the file. */
  source: JsonNode;
  /** The cell's object in the file. */
  node: JsonNode;
}

export interface NotebookFile {
  /** The file's text, as read. */
  text: string;
  cells: NotebookFileCell[];
  /** The kernel's language (`metadata.language_info.name`, else `metadata.kernelspec.language`), if the file says. */
  language: string | undefined;
}

const CELL_KINDS: readonly NotebookCellKind[] = ['code', 'markdown', 'raw'];

/** Reads an nbformat 4 notebook, or says (translated) why the file is not one. */
export function parseNotebook(text: string): { notebook: NotebookFile } | { error: string } {
  let root: JsonNode;
  try {
    root = parseJson(text);
  } catch (error) {
    if (!(error instanceof JsonSyntaxError)) throw error;
    const { line, column } = lineAndColumn(text, error.offset);
    return { error: t('not valid JSON (line {0}, column {1}: {2})', line, column, error.message) };
  }
  const version = member(root, 'nbformat');
  const cells = member(root, 'cells');
  if (root.kind !== 'object' || (!version && !cells)) return { error: t('not a Jupyter notebook (no "nbformat" and no "cells")') };
  if (version?.kind !== 'number' || version.value !== 4) {
    const shown = version ? text.slice(version.start, version.end) : t('unknown');
    return { error: t('nbformat {0} notebook; only nbformat 4 is supported', shown) };
  }
  if (cells?.kind !== 'array') return { error: t('not a valid nbformat 4 notebook: "cells" is not a list') };
  const out: NotebookFileCell[] = [];
  for (const [i, cell] of cells.items.entries()) {
    const kind = member(cell, 'cell_type');
    const source = member(cell, 'source');
    const pieces = source?.kind === 'array' ? source.items : source ? [source] : [];
    if (kind?.kind !== 'string' || !source || pieces.some((piece) => piece.kind !== 'string')) {
      return { error: t('not a valid nbformat 4 notebook: cell {0} has no "cell_type" or no "source" text', i + 1) };
    }
    out.push({
      kind: CELL_KINDS.includes(kind.value as NotebookCellKind) ? (kind.value as NotebookCellKind) : 'raw',
      text: pieces.map((piece) => (piece.kind === 'string' ? piece.value : '')).join(''),
      source,
      node: cell,
    });
  }
  const metadata = member(root, 'metadata');
  const languageNode = member(member(metadata, 'language_info'), 'name') ?? member(member(metadata, 'kernelspec'), 'language');
  return { notebook: { text, cells: out, language: languageNode?.kind === 'string' ? languageNode.value : undefined } };
}

/** Whether the notebook's code cells are Python (a notebook that does not say is taken to be). */
export function isPythonNotebook(notebook: NotebookFile): boolean {
  return notebook.language === undefined || /^(i?python\d*)$/i.test(notebook.language.trim());
}

/** A notebook as `check` and `estimate` read it: its file, and the program of its code cells (engine/notebook.ts). */
export interface CheckedNotebook {
  file: NotebookFile;
  program: NotebookProgram;
}

/** Reads a notebook file as the program of its code cells; a file that is not an nbformat 4 notebook gives the reason. */
export function readNotebook(text: string): CheckedNotebook | { error: string } {
  const parsed = parseNotebook(text);
  if ('error' in parsed) return parsed;
  // The code cells of a notebook in another language are not Python: nothing to check.
  const cells = isPythonNotebook(parsed.notebook) ? parsed.notebook.cells : [];
  return { file: parsed.notebook, program: joinCells(cells) };
}

/** A cell's source split as nbformat writes it: one string per line, each with its line break. */
export function sourceLines(text: string): string[] {
  const lines = text.match(/[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$/g) ?? [];
  return lines.filter((line) => line.length > 0);
}

/** Writes a string as the file writes its strings: raw non-ASCII text, or `\uXXXX` escapes if the file uses those. */
function encodeString(value: string, asciiOnly: boolean): string {
  const json = JSON.stringify(value);
  return asciiOnly ? json.replace(/[\u0080-\uffff]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`) : json;
}

/** The whitespace from the start of the line that holds `offset` up to it. */
function indentBefore(text: string, offset: number): string {
  let start = offset;
  while (start > 0 && text[start - 1] !== '\n' && text[start - 1] !== '\r') start--;
  return /^[ \t]*/.exec(text.slice(start, offset))![0];
}

/** The new text of a cell's `source` value, laid out like the old one (one string or a list, same indentation). */
function formatSource(file: string, cellNode: JsonNode, old: JsonNode, text: string, asciiOnly: boolean): string {
  if (old.kind === 'string') return encodeString(text, asciiOnly);
  if (old.kind !== 'array') return encodeString(text, asciiOnly);
  const lines = sourceLines(text);
  if (lines.length === 0) return '[]';
  // Unchanged lines keep their exact spelling in the file (escapes included).
  const spellings = new Map<string, string[]>();
  for (const item of old.items) {
    if (item.kind !== 'string') continue;
    const list = spellings.get(item.value) ?? [];
    list.push(file.slice(item.start, item.end));
    spellings.set(item.value, list);
  }
  const items = lines.map((line) => spellings.get(line)?.shift() ?? encodeString(line, asciiOnly));
  const oldText = file.slice(old.start, old.end);
  if (old.items.length > 0 && !/[\r\n]/.test(oldText)) {
    const separator = /,(\s*)/.exec(oldText)?.[0] ?? ', ';
    return `[${items.join(separator)}]`;
  }
  const eol = /\r\n/.test(oldText) || (old.items.length === 0 && /\r\n/.test(file)) ? '\r\n' : '\n';
  let itemIndent: string;
  let closeIndent: string;
  if (old.items.length > 0) {
    itemIndent = indentBefore(file, old.items[0]!.start);
    closeIndent = indentBefore(file, old.end - 1);
  } else {
    // `"source": []`: one level deeper than the key, a level being the step from the cell's brace to its keys.
    const sourceEntry = cellNode.kind === 'object' ? cellNode.entries.find((entry) => entry.value === old) : undefined;
    const keyIndent = sourceEntry ? indentBefore(file, sourceEntry.keyStart) : '';
    const braceIndent = indentBefore(file, cellNode.start);
    const unit = keyIndent.length > braceIndent.length && keyIndent.startsWith(braceIndent) ? keyIndent.slice(braceIndent.length) : ' ';
    itemIndent = keyIndent + unit;
    closeIndent = keyIndent;
  }
  return `[${eol}${items.map((item) => itemIndent + item).join(`,${eol}`)}${eol}${closeIndent}]`;
}

/**
 * The notebook file with new sources for some cells (by cell index): only those cells' `source` values change;
 * outputs, metadata, indentation, key order and line endings stay byte for byte.
 */
export function replaceCellSources(notebook: NotebookFile, sources: ReadonlyMap<number, string>): string {
  const file = notebook.text;
  const asciiOnly = !/[^\u0000-\u007f]/.test(file) && /\\u00[89a-f][0-9a-f]|\\u0[1-9a-f][0-9a-f]{2}|\\u[1-9a-f][0-9a-f]{3}/i.test(file);
  const replacements = [...sources]
    .filter(([index, text]) => notebook.cells[index] && notebook.cells[index]!.text !== text)
    .map(([index, text]) => {
      const { source: old, node } = notebook.cells[index]!;
      return { start: old.start, end: old.end, text: formatSource(file, node, old, text, asciiOnly) };
    })
    .sort((a, b) => b.start - a.start);
  let out = file;
  for (const replacement of replacements) out = out.slice(0, replacement.start) + replacement.text + out.slice(replacement.end);
  return out;
}

/**
 * The line of the notebook file (1-based) that holds line `line` (0-based) of a cell's source: the list item of
 * that line, or the line where a one-string source starts. SARIF and GitHub annotations point into the file.
 */
export function fileLineOf(notebook: NotebookFile, cellIndex: number, line: number): number {
  const source = notebook.cells[cellIndex]?.source;
  if (!source) return 1;
  let offset = source.start;
  if (source.kind === 'array') {
    let breaks = 0;
    for (const item of source.items) {
      offset = item.start;
      if (item.kind !== 'string') continue;
      breaks += (item.value.match(/\r\n|\r|\n/g) ?? []).length;
      if (breaks > line) break;
    }
  }
  const text = notebook.text;
  let count = 1;
  for (let i = 0; i < offset; i++) if (text.charCodeAt(i) === 10) count++;
  return count;
}
