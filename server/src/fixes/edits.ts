// Building blocks for fixes: text edits that keep the user's indentation (spaces or tabs) and line endings.
import type { Node } from '../engine/parser';
import { rangeOf } from '../engine/syntax';
import type { Position, Range, TextEdit } from '../engine/types';
import { PieceText, wholeText } from '../engine/piece-text';
import type { TextLike } from '../engine/piece-text';
import { NodeMemo } from '../engine/node-memo';

export function replaceNode(node: Node, newText: string): TextEdit {
  return { range: rangeOf(node), newText };
}

export function insertAt(position: Position, newText: string): TextEdit {
  return { range: { start: position, end: position }, newText };
}

/** The line ending the file uses (CRLF files stay CRLF, and files with lone `\r` endings keep them). */
export function lineEnding(source: TextLike): string {
  // An edited document's text knows whether it holds a carriage return (most do not) without being read whole.
  if (typeof source !== 'string' && source.carriageReturns === 0) return '\n';
  const text = wholeText(source);
  // Every fix asks, of the same text: the last answer is kept (a scan per fix would be quadratic in a long file).
  if (text !== lastEndingText) {
    lastEndingText = text;
    lastEnding = text.includes('\r\n') ? '\r\n' : text.includes('\r') && !text.includes('\n') ? '\r' : '\n';
  }
  return lastEnding;
}

let lastEndingText: string | undefined;
let lastEnding = '\n';

/** The leading whitespace of the line that holds `node`. */
export function lineIndent(node: Node): string {
  const match = /^[ \t]*/.exec(node.content.slice(node.startIndex - node.startColumn, node.startIndex + 1));
  return match ? match[0] : '';
}

// Every fix of every finding asks, of the same text: the last answer is kept.
let lastIndentText: TextLike | undefined;
let lastIndentUnit = '';

/** What some lines say about the indentation unit: the fewest spaces that start one, and whether a tab starts one. */
interface IndentEvidence {
  unit: number;
  tab: boolean;
}

/**
 * The indentation of the line that starts at `start`: `unit` is the length of its leading run of spaces and `tab`
 * whether it is a run of tabs, both only when something other than whitespace follows the run; `read` is the offset
 * of the character that decided it (the one after the run).
 */
function lineIndentAt(text: TextLike, start: number, evidence: IndentEvidence): number {
  const first = text.charCodeAt(start);
  let end = start;
  if (first === 9 || first === 32) {
    while (text.charCodeAt(end) === first) end++;
    // A tab or a space run counts when something other than whitespace follows it on the line.
    if (end < text.length && /\S/.test(String.fromCharCode(text.charCodeAt(end)))) {
      if (first === 9) evidence.tab = true;
      else evidence.unit = Math.min(evidence.unit, end - start);
    }
  }
  return end;
}

function unitOf(evidence: IndentEvidence): string {
  return evidence.tab ? '\t' : ' '.repeat(Number.isFinite(evidence.unit) ? evidence.unit : 4);
}

/** Where the line after the one holding `offset` starts (lines end at `\n`, `\r\n` or `\r`). */
function nextLineStart(text: TextLike, offset: number): number {
  let end = offset;
  const length = text.length;
  while (end < length && text.charCodeAt(end) !== 10 && text.charCodeAt(end) !== 13) end++;
  return text.charCodeAt(end) === 13 && text.charCodeAt(end + 1) === 10 ? end + 2 : end + 1;
}

/**
 * One level of indentation as the file writes it: a tab if a line starts with tabs, else the fewest spaces that
 * start a line (4 when none does). One pass over the text's characters (lines end at `\n`, `\r\n` or `\r`).
 */
export function indentUnit(source: TextLike): string {
  // The counts a document keeps (IndentCounts.unitOf) answered for its text, which a fix may ask of as one string.
  if (source === lastIndentText || (typeof source === 'string' && lastIndentText instanceof PieceText && lastIndentText.isWhole && lastIndentText.text === source)) return lastIndentUnit;
  const text = wholeText(source);
  const evidence: IndentEvidence = { unit: Infinity, tab: false };
  const length = text.length;
  for (let start = 0; start < length && !evidence.tab;) start = nextLineStart(text, lineIndentAt(text, start, evidence));
  lastIndentText = source;
  lastIndentUnit = unitOf(evidence);
  return lastIndentUnit;
}

/**
 * What indentUnit reads, kept line by line for a document that changes an edit at a time (engine/documents.ts): how
 * many lines start with each run of spaces (by its length) or with tabs before something else. An edit takes out
 * the lines it replaced and adds those it wrote, so a keystroke reads one line, not the file.
 */
export class IndentCounts {
  private readonly spaces = new Map<number, number>();
  private tabs = 0;

  /** Adds (`sign` 1) or takes out (-1) the lines `from` to `to` of `text`, which start at `lineStarts`. */
  count(text: TextLike, lineStarts: readonly number[], from: number, to: number, sign: 1 | -1): void {
    for (let line = from; line <= to && line < lineStarts.length; line++) {
      const evidence: IndentEvidence = { unit: Infinity, tab: false };
      lineIndentAt(text, lineStarts[line]!, evidence);
      if (evidence.tab) this.tabs += sign;
      else if (Number.isFinite(evidence.unit)) {
        const lines = (this.spaces.get(evidence.unit) ?? 0) + sign;
        if (lines === 0) this.spaces.delete(evidence.unit);
        else this.spaces.set(evidence.unit, lines);
      }
    }
  }

  /** indentUnit(text) of the text counted, remembered for the fixes that ask indentUnit of it. */
  unitOf(text: TextLike): string {
    let unit = Infinity;
    for (const length of this.spaces.keys()) unit = Math.min(unit, length);
    lastIndentText = text;
    lastIndentUnit = unitOf({ unit, tab: this.tabs > 0 });
    return lastIndentUnit;
  }
}

// The evidence of the lines that start strictly inside a top-level statement depends on its text alone, and a
// statement moved unchanged into the next version of the tree keeps its node: it is kept per node. Null: a line's
// run of whitespace reaches past the statement's end, so its evidence depends on what follows.
const statementIndentCache = new NodeMemo<IndentEvidence | null>();

function innerIndentEvidence(text: TextLike, statement: Node): IndentEvidence | null {
  let evidence = statementIndentCache.get(statement);
  if (evidence !== undefined) return evidence;
  evidence = { unit: Infinity, tab: false };
  const end = statement.endIndex;
  for (let start = nextLineStart(text, statement.startIndex); start < end; start = nextLineStart(text, start)) {
    if (lineIndentAt(text, start, evidence) >= end) {
      evidence = null;
      break;
    }
  }
  statementIndentCache.set(statement, evidence);
  return evidence;
}

/**
 * indentUnit of the text a syntax tree was copied from, read statement by statement: the lines inside a top-level
 * statement are read once while the statement stays unchanged from version to version, and only the lines that
 * start between statements (or at one's start) are read each time. The same answer as indentUnit(text), which the
 * fixes built afterwards then find remembered.
 */
export function indentUnitOfTree(root: Node, source: TextLike): string {
  if (source === lastIndentText) return lastIndentUnit;
  // A tree of another text (a recovered parse): read the text itself.
  if (typeof source === 'string' ? root.source !== source : root.content !== source) return indentUnit(source);
  // Read as one string: the lines between statements are read character by character.
  const text = wholeText(source);
  const evidence: IndentEvidence = { unit: Infinity, tab: false };
  const length = text.length;
  // The lines that start in [from, to] (outside every statement, or at a statement's first character).
  const readGap = (from: number, to: number) => {
    for (let start = from; start <= to && start < length; start++) {
      const previous = start > 0 ? text.charCodeAt(start - 1) : 10;
      const lineStart = previous === 10 || (previous === 13 && text.charCodeAt(start) !== 10);
      if (lineStart) lineIndentAt(text, start, evidence);
    }
  };
  let gapStart = 0;
  for (const statement of root.children) {
    readGap(gapStart, statement.startIndex);
    if (statement.endIndex > statement.startIndex) {
      const inner = innerIndentEvidence(text, statement);
      if (inner) {
        evidence.unit = Math.min(evidence.unit, inner.unit);
        evidence.tab ||= inner.tab;
      } else {
        for (let start = nextLineStart(text, statement.startIndex); start < statement.endIndex; start = nextLineStart(text, start)) lineIndentAt(text, start, evidence);
      }
    }
    gapStart = Math.max(gapStart, statement.endIndex);
  }
  readGap(gapStart, length);
  lastIndentText = source;
  lastIndentUnit = unitOf(evidence);
  return lastIndentUnit;
}

/** The start of the line holding `node`, as a position. */
export function lineStart(node: Node): Position {
  return { line: node.startPosition.row, character: 0 };
}

/** Deletes whole lines [first, last] (0-based, inclusive). */
export function deleteLines(first: number, last: number): TextEdit {
  const range: Range = { start: { line: first, character: 0 }, end: { line: last + 1, character: 0 } };
  return { range, newText: '' };
}

/** An edit that adds `import torch` after the module docstring and `from __future__` imports. */
export function addTorchImport(root: Node, text: TextLike): TextEdit {
  let line = 0;
  for (const child of root.namedChildren) {
    const isDocstring = child.type === 'expression_statement' && child.namedChildren[0]?.type === 'string';
    const isFuture = child.type === 'import_from_statement' && /^from __future__/.test(child.text);
    if (child.type === 'comment' || isDocstring || isFuture) line = child.endPosition.row + 1;
    else break;
  }
  return insertAt({ line, character: 0 }, `import torch${lineEnding(text)}`);
}

/** The name the file uses for torch (`torch`, or the alias of `import torch as th`), if it imports it. */
export function torchName(imports: ReadonlyMap<string, string>): string | undefined {
  for (const [local, qualified] of imports) if (qualified === 'torch') return local;
  return undefined;
}

const importStatements = new NodeMemo<Node[]>();
const statementImports = new NodeMemo<Node[]>();

/** The `import` statements of one top-level statement, itself included, in document order. */
function importsOfStatement(statement: Node): Node[] {
  let found = statementImports.get(statement);
  if (!found) {
    // Most statements import nothing: their text says so without a walk of their nodes.
    found = statement.text.includes('import') ? statement.descendantsOfType('import_statement') : [];
    if (statement.type === 'import_statement') found.unshift(statement);
    statementImports.set(statement, found);
  }
  return found;
}

/**
 * The name torch is bound to where `at` runs: `import torch` (or `import torch as th`, `import torch.nn`) at module
 * level or in a function around `at`. An import inside some other function does not count, so the fix adds its own.
 */
export function torchNameAt(root: Node, at: Node): string | undefined {
  // Cached per tree (every fix of every finding asks), from lists cached per top-level statement: a statement moved
  // unchanged into a new version of the document is not searched again.
  let imports = importStatements.get(root);
  if (!imports) {
    imports = [];
    for (const statement of root.children) for (const found of importsOfStatement(statement)) imports.push(found);
    importStatements.set(root, imports);
  }
  for (const statement of imports) {
    let scope = statement.parent;
    while (scope && scope.type !== 'function_definition' && scope.type !== 'module') scope = scope.parent;
    const visible = !scope || scope.type === 'module' || (scope.startIndex <= at.startIndex && at.endIndex <= scope.endIndex);
    if (!visible) continue;
    for (const child of statement.namedChildren) {
      if (child.type === 'dotted_name' && child.text.split('.')[0] === 'torch') return 'torch';
      if (child.type === 'aliased_import' && child.childForFieldName('name')?.text === 'torch') return child.childForFieldName('alias')?.text;
    }
  }
  return undefined;
}

/** Expressions that take a method call as they are; any other needs parentheses (`(a + b).detach()`). */
const PRIMARY_EXPRESSIONS = new Set(['identifier', 'attribute', 'call', 'subscript', 'parenthesized_expression']);

/** Wraps an expression in parentheses when a method call on it would bind to its last operand. */
export function asReceiver(node: Node): string {
  return PRIMARY_EXPRESSIONS.has(node.type) ? node.text : `(${node.text})`;
}

/**
 * Removes a statement that stands on lines of its own; where it is the only statement of its block,
 * it becomes `pass` so the block stays valid. Returns undefined where the statement shares a line.
 */
export function removeStatement(statement: Node): TextEdit | undefined {
  const block = statement.parent;
  if (!block) return undefined;
  const siblings = block.namedChildren.filter((child) => child.type !== 'comment');
  const sharesLine = siblings.some(
    (other) => other.id !== statement.id && (other.endPosition.row === statement.startPosition.row || other.startPosition.row === statement.endPosition.row),
  );
  // `for x in xs: stmt` puts the statement on the loop's own line.
  if (sharesLine || lineIndent(statement).length !== statement.startPosition.column) return undefined;
  if (block.type === 'block' && siblings.length === 1) return replaceNode(statement, 'pass');
  return deleteLines(statement.startPosition.row, statement.endPosition.row);
}

/**
 * Adds a keyword argument at the end of a call's arguments, in the call's style: on a line of its own (with the
 * indentation of the last argument) when the arguments stand one per line, otherwise after the last one. A comment
 * at the end of the last argument's line stays with that argument.
 */
export function addKeywordArgument(call: Node, text: TextLike, argument: string): TextEdit[] | undefined {
  const list = call.childForFieldName('arguments');
  if (list?.type !== 'argument_list') return undefined;
  const args = list.namedChildren.filter((child) => child.type !== 'comment');
  const last = args[args.length - 1];
  if (!last) {
    const open = list.children[0]!;
    return [insertAt({ line: open.endPosition.row, character: open.endPosition.column }, argument)];
  }
  const ownLine = lineIndent(last).length === last.startPosition.column && last.startPosition.row !== list.startPosition.row;
  const after = (node: Node) => list.children[list.children.indexOf(node) + 1];
  if (!ownLine) return [insertAt({ line: last.endPosition.row, character: last.endPosition.column }, `, ${argument}`)];
  const comma = after(last)?.type === ',' ? after(last)! : undefined;
  const anchor = comma ?? last;
  const comment = after(anchor)?.type === 'comment' && after(anchor)!.startPosition.row === anchor.endPosition.row ? after(anchor)! : undefined;
  const end = comment ?? anchor;
  const line = `${lineEnding(text)}${lineIndent(last)}${argument},`;
  // Without a comma after the last argument, one goes there (before its comment, if it has one).
  if (comma) return [insertAt({ line: end.endPosition.row, character: end.endPosition.column }, line)];
  if (!comment) return [insertAt({ line: last.endPosition.row, character: last.endPosition.column }, `,${line}`)];
  return [
    insertAt({ line: last.endPosition.row, character: last.endPosition.column }, ','),
    insertAt({ line: comment.endPosition.row, character: comment.endPosition.column }, line),
  ];
}
