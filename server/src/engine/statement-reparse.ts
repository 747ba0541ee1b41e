// The edit path's parse. tree-sitter re-parses incrementally, but its work still grows with the number of top-level
// statements (it shifts and reduces each reused one again): 12 ms at 20,000 lines. An edit inside one top-level
// statement of an error-free file is parsed with that statement's text alone instead; the document's tree-sitter
// tree only records the edit (tree.edit) and is re-parsed when something needs it (DocumentStore.currentTree).
//
// Parsing a statement alone gives what the whole file gives when the statement starts at column 0 after the
// previous one (the parser is then between statements, as at the start of a module) and its text parses into
// exactly one statement without error, followed by nothing but blank space up to the next statement (which starts
// at column 0 and cannot continue it: an `else:` there would have been an error of the previous version).
import type { Tree } from 'web-tree-sitter';
import { loadedParser } from './parser';
import { rememberParsedAlone } from './queries';
import { lowerBound } from './syntax';
import type { PieceText } from './piece-text';
import { copyCursorAt, moveSubtree, setSourceText, standaloneNode, SyntaxNode } from './syntax-tree';
import type { SingleEdit, SourceText } from './syntax-tree';

/** The index of the top-level statement whose text (up to the next one) holds [start, end), if one does. */
function statementHolding(root: SyntaxNode, start: number, end: number, textLength: number): number | undefined {
  const children = root.children;
  // The last statement that starts at or before `start`.
  const index = lowerBound(children, start + 1) - 1;
  if (index < 0) return undefined;
  const nextStart = children[index + 1]?.startIndex ?? textLength;
  return end < nextStart ? index : undefined;
}

const BLANK = /^[ \t\f\n]*$/;

/**
 * The copy of the document after one edit, when it falls inside one top-level statement of an error-free previous
 * copy and that statement's new text parses alone as one statement (see the header); undefined otherwise. `edit`
 * is in the new text's coordinates, as copyTreeIncremental takes it; `lineStarts` are the new text's, and
 * `previousLength` the length of the text the previous copy was made of.
 */
export function copyTreeReparsingStatement(holder: SourceText, source: PieceText, previous: SyntaxNode, previousLength: number, edit: SingleEdit, lineStarts: number[]): SyntaxNode | undefined {
  const parser = loadedParser();
  if (!parser || previous.hasError) return undefined;
  const index = statementHolding(previous, edit.startIndex, edit.oldEndIndex, previousLength);
  if (index === undefined) return undefined;
  const old = previous.children[index]!;
  const indexDelta = edit.newEndIndex - edit.oldEndIndex;
  const rowDelta = edit.newEndRow - edit.oldEndRow;
  const next = previous.children[index + 1];
  const sliceStart = old.startIndex;
  const sliceEnd = next ? next.startIndex + indexDelta : source.length;
  const slice = source.slice(sliceStart, sliceEnd);
  // A carriage return would need parseableText's rewriting and the row rules of lines.ts: the whole parse does that.
  if (slice.includes('\r')) return undefined;
  let tree: Tree | null = null;
  try {
    tree = parser.parse(slice);
    const module = tree?.rootNode;
    if (!module || module.hasError || module.childCount !== 1) return undefined;
    const statement = module.child(0)!;
    if (statement.startIndex !== 0 || !BLANK.test(slice.slice(statement.endIndex))) return undefined;
    const cursor = statement.walk();
    const copy = copyCursorAt(cursor, tree!, holder, lineStarts, sliceStart);
    cursor.delete();
    // The document's tree is not re-parsed now: the statement's query matches come from parsing it alone again.
    rememberParsedAlone(copy);
    const first = index === 0 ? copy : previous.children[0]!;
    const end = previous.endIndex + indexDelta;
    const root = standaloneNode(holder, previous.type, previous.isNamed, previous.isMissing, first.startIndex, end, first.startRow);
    root.children = previous.children.map((child, i) => {
      if (i === index) child = copy;
      else if (i > index) moveSubtree(child, indexDelta, rowDelta);
      child.parent = root;
      return child;
    });
    // The same statements in the same places: the same field names (none, for a module's statements).
    root.childFields = previous.childFields;
    // Reused nodes share the document's holder: from here on they read the new text.
    setSourceText(holder, source, lineStarts);
    return root;
  } finally {
    tree?.delete();
  }
}
