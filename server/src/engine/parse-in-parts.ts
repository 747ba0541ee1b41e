// The open of a long document, parsed a part at a time. A whole-file tree-sitter tree of a 20,000-line script takes
// 21 MB of the parser's WebAssembly memory, which grows to hold it: the kernel maps each fresh page on first touch
// (5,400 pages, 80-200 ms of a cold open here, and memory the parser never gives back). Parts of about 2,000 lines
// are parsed one after another, each copied and deleted before the next, so that they reuse the same few megabytes.
//
// Parsing a part alone gives what the whole file gives when the part starts with a top-level statement at column 0
// (the parser is then between statements, as at the start of a module) and parses without an error: a part cut
// inside a string, a bracket or a compound statement has one (its unclosed construct, or the next part's stray
// `else:`), and the whole file is parsed instead. Parts start only at a `def`, `class` or decorator line, which are
// almost always statements of their own, and never right after a decorator or a line continued by a backslash.
import type { Tree } from 'web-tree-sitter';
import { loadedParser } from './parser';
import { copyStatementsAt, standaloneNode, SyntaxNode } from './syntax-tree';
import type { SourceText, StatementCollector } from './syntax-tree';

/** Lines per part: a part's tree takes a few megabytes of the parser's memory. */
const PART_LINES = 2000;

const PART_START = /^(?:def |class |async def |@)/;

/** Where each part starts (line indexes, the first 0): one part for a text too short or with a carriage return. */
function partStarts(text: string, lineStarts: readonly number[], partLines: number): number[] {
  const starts = [0];
  if (text.includes('\r')) return starts;
  for (let line = partLines; line < lineStarts.length; line++) {
    const start = lineStarts[line]!;
    if (!PART_START.test(text.slice(start, start + 10))) continue;
    // A decorator belongs to the definition after it; a backslash continues the line into the next.
    const previous = text.slice(lineStarts[line - 1]!, start - 1);
    if (previous.startsWith('@') || previous.endsWith('\\')) continue;
    starts.push(line);
    line += partLines - 1;
  }
  return starts;
}

/**
 * A copy of the text's syntax tree made part by part (see the header), its nodes reading `holder` and its statements
 * handed to `collector`; undefined where the text is one part, or a part has an error: the whole file is parsed then.
 */
export function copyParsedInParts(text: string, holder: SourceText, lineStarts: readonly number[], collector?: StatementCollector, partLines = PART_LINES): SyntaxNode | undefined {
  const parser = loadedParser();
  const starts = parser ? partStarts(text, lineStarts, partLines) : [0];
  if (!parser || starts.length < 2) return undefined;
  const statements: SyntaxNode[] = [];
  for (let part = 0; part < starts.length; part++) {
    const start = lineStarts[starts[part]!]!;
    const end = part + 1 < starts.length ? lineStarts[starts[part + 1]!]! : text.length;
    let tree: Tree | null = null;
    try {
      tree = parser.parse(text.slice(start, end));
      if (!tree || tree.rootNode.hasError) return undefined;
      for (const statement of copyStatementsAt(tree, holder, lineStarts, start, collector)) statements.push(statement);
    } finally {
      tree?.delete();
    }
  }
  if (statements.length === 0) return undefined;
  // The module spans its first statement's start to the end of the text, as tree-sitter's root does.
  const first = statements[0]!;
  const root = standaloneNode(holder, 'module', true, false, first.startIndex, text.length, first.startRow);
  for (const statement of statements) statement.parent = root;
  root.children = statements;
  return root;
}
