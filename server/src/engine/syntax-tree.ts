// A plain JavaScript copy of a tree-sitter tree. The rules ask many small questions of the tree (parents, fields,
// ranges); asked of web-tree-sitter's nodes, each one is a call into WebAssembly and a new wrapper object. One
// cursor walk per document version copies the tree into these objects, and every later question is a field read.
import type { Language, Point, Tree, TreeCursor } from 'web-tree-sitter';
import { computeLineStarts, lineIndexAt } from './lines';

/** The text a tree was parsed from, shared by all its nodes; a document's holder follows its versions. */
export interface SourceText {
  text: string;
}

export class SyntaxNode {
  parent: SyntaxNode | null = null;
  readonly children: SyntaxNode[] = [];
  /** The field name of each child (`left`, `body`, …), null where the grammar names none. */
  readonly childFields: Array<string | null> = [];
  hasError = false;
  private namedCache: SyntaxNode[] | undefined;

  // Offsets and rows are mutable only so that an unchanged statement can be moved into the
  // next version of the tree (copyTreeIncremental) instead of being copied again.
  constructor(
    private readonly sourceRef: SourceText,
    readonly id: number,
    readonly type: string,
    readonly isNamed: boolean,
    readonly isMissing: boolean,
    public startIndex: number,
    public endIndex: number,
    public startPosition: Point,
    public endPosition: Point,
  ) {}

  get source(): string {
    return this.sourceRef.text;
  }

  get text(): string {
    return this.sourceRef.text.slice(this.startIndex, this.endIndex);
  }

  get isError(): boolean {
    return this.type === 'ERROR';
  }

  get namedChildren(): SyntaxNode[] {
    this.namedCache ??= this.children.filter((child) => child.isNamed);
    return this.namedCache;
  }

  get nextSibling(): SyntaxNode | null {
    const siblings = this.parent?.children;
    if (!siblings) return null;
    return siblings[siblings.indexOf(this) + 1] ?? null;
  }

  get previousSibling(): SyntaxNode | null {
    const siblings = this.parent?.children;
    if (!siblings) return null;
    const index = siblings.indexOf(this);
    return index > 0 ? siblings[index - 1]! : null;
  }

  childForFieldName(field: string): SyntaxNode | null {
    const index = this.childFields.indexOf(field);
    return index < 0 ? null : this.children[index]!;
  }

  childrenForFieldName(field: string): SyntaxNode[] {
    return this.children.filter((_, i) => this.childFields[i] === field);
  }

  /** Descendants (not the node itself) of the given types, in document order. */
  descendantsOfType(types: string | readonly string[]): SyntaxNode[] {
    const wanted = typeof types === 'string' ? new Set([types]) : new Set(types);
    const found: SyntaxNode[] = [];
    const stack = [...this.children].reverse();
    while (stack.length > 0) {
      const node = stack.pop()!;
      if (wanted.has(node.type)) found.push(node);
      for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]!);
    }
    return found;
  }
}

// Ids are unique across versions, so nodes moved into a new version keep theirs.
let nextId = 0;

/** An id no node has had: for a node made outside a copy (a new version's root). */
export function freshNodeId(): number {
  return nextId++;
}

/** Copies a tree-sitter tree into SyntaxNodes with one cursor walk. */
export function copyTree(tree: Tree, source: string | SourceText): SyntaxNode {
  const ref = typeof source === 'string' ? { text: source } : source;
  return copyCursorSubtree(tree.walk(), copyContext(tree, ref), true);
}

/** What a copy needs besides the cursor: the text, where its rows start, and the grammar's name tables. */
interface CopyContext {
  source: SourceText;
  /** Offsets where rows start (tree-sitter parses the text with lone `\r` read as `\n`, see lines.ts). */
  rowStarts: number[];
  types: string[];
  fields: Array<string | null>;
  named: Array<boolean | undefined>;
  language: Language;
  /** Added to the cursor's offsets: a statement parsed alone starts at 0 but lies at this offset in the document. */
  offset: number;
}

function copyContext(tree: Tree, source: SourceText, lineStarts?: number[]): CopyContext {
  const rowStarts = lineStarts ?? computeLineStarts(source.text);
  const language = tree.language;
  return { source, rowStarts, types: language.types, fields: language.fields, named: [], language, offset: 0 };
}

function pointAt(rowStarts: number[], offset: number): Point {
  const row = lineIndexAt(rowStarts, offset);
  return { row, column: offset - rowStarts[row]! };
}

/**
 * Copies the node under the cursor and its subtree; the cursor ends where it started (or is deleted). Each node
 * costs four questions to WebAssembly (type id, start, end, field id); names come from the grammar's tables and
 * rows and columns from the text, which is what makes this walk cheap.
 */
function copyCursorSubtree(cursor: TreeCursor, context: CopyContext, ownsCursor: boolean): SyntaxNode {
  const { source, rowStarts, types, named, language, offset } = context;
  const make = () => {
    const typeId = cursor.nodeTypeId;
    const startIndex = cursor.startIndex + offset;
    const endIndex = cursor.endIndex + offset;
    let isNamed = named[typeId];
    if (isNamed === undefined) isNamed = named[typeId] = language.nodeTypeIsNamed(typeId);
    // Only a zero-width node can be one that the parser inserted (MISSING).
    const isMissing = startIndex === endIndex && cursor.nodeIsMissing;
    return new SyntaxNode(source, nextId++, types[typeId] ?? 'ERROR', isNamed, isMissing, startIndex, endIndex,
      pointAt(rowStarts, startIndex), pointAt(rowStarts, endIndex));
  };
  const field = () => context.fields[cursor.currentFieldId] ?? null;
  const root = make();
  let current = root;
  for (;;) {
    if (cursor.gotoFirstChild()) {
      const child = make();
      child.parent = current;
      current.children.push(child);
      current.childFields.push(field());
      current = child;
      continue;
    }
    for (;;) {
      // Errors propagate upwards as each node is left for good.
      current.hasError ||= current.type === 'ERROR' || current.isMissing;
      if (current.parent) current.parent.hasError ||= current.hasError;
      if (current !== root && cursor.gotoNextSibling()) {
        const parent = current.parent!;
        const sibling = make();
        sibling.parent = parent;
        parent.children.push(sibling);
        parent.childFields.push(field());
        current = sibling;
        break;
      }
      if (current === root || !cursor.gotoParent()) {
        if (ownsCursor) cursor.delete();
        return root;
      }
      current = current.parent!;
    }
  }
}

/** An edit in the coordinates of the new text: [start, newEnd) replaced [start, oldEnd) of the old text. */
export interface SingleEdit {
  startIndex: number;
  oldEndIndex: number;
  newEndIndex: number;
  startRow: number;
  oldEndRow: number;
  newEndRow: number;
}

export function moveSubtree(node: SyntaxNode, indexDelta: number, rowDelta: number): void {
  if (indexDelta === 0 && rowDelta === 0) return;
  const stack = [node];
  while (stack.length > 0) {
    const current = stack.pop()!;
    {
      current.startIndex += indexDelta;
      current.endIndex += indexDelta;
      current.startPosition = { row: current.startPosition.row + rowDelta, column: current.startPosition.column };
      current.endPosition = { row: current.endPosition.row + rowDelta, column: current.endPosition.column };
    }
    for (const child of current.children) stack.push(child);
  }
}

/**
 * Copies a tree after one edit, moving the top-level statements that the edit did not touch out of the previous
 * copy instead of copying them again. A statement is reused only when it lies wholly before the edit, or starts
 * on a later line than the edit's end (so its columns are unchanged), and has the same type and text as before.
 */
export function copyTreeIncremental(tree: Tree, holder: SourceText, source: string, previous: SyntaxNode, previousText: string, edit: SingleEdit, lineStarts?: number[]): SyntaxNode {
  const indexDelta = edit.newEndIndex - edit.oldEndIndex;
  const rowDelta = edit.newEndRow - edit.oldEndRow;
  const oldByStart = new Map<number, SyntaxNode>();
  for (const child of previous.children) oldByStart.set(child.startIndex, child);
  // The document's line starts, when the caller kept them up to date (computeLineStarts of `source`).
  const context = copyContext(tree, { text: source }, lineStarts);
  // New subtrees read the document's holder, like the statements moved from the previous copy.
  context.source = holder;
  const cursor = tree.walk();
  const root = new SyntaxNode(holder, nextId++, cursor.nodeType, cursor.nodeIsNamed, cursor.nodeIsMissing, cursor.startIndex, cursor.endIndex, cursor.startPosition, cursor.endPosition);
  if (cursor.gotoFirstChild()) {
    do {
      const start = cursor.startIndex;
      const end = cursor.endIndex;
      // Before the edit nothing moved; after it, everything moved by the same offset and rows.
      const before = end < edit.startIndex;
      const after = start >= edit.newEndIndex && cursor.startPosition.row > edit.newEndRow;
      const shift = before ? 0 : indexDelta;
      const old = before || after ? oldByStart.get(start - shift) : undefined;
      // The text before the edit's start and after its end is the previous text, moved by the edit's length: a
      // statement wholly on one side of the edit with the same range (moved) has the same text as before, which is
      // why the texts themselves need no comparison (that would read the whole file on every edit).
      const unchanged = !!old && old.endIndex === end - shift && old.type === cursor.nodeType;
      if (unchanged && after) moveSubtree(old!, indexDelta, rowDelta);
      const reused = unchanged ? old : undefined;
      const child = reused ?? copyCursorSubtree(cursor, context, false);
      child.parent = root;
      root.children.push(child);
      root.childFields.push(cursor.currentFieldName);
      root.hasError ||= child.hasError;
    } while (cursor.gotoNextSibling());
  }
  cursor.delete();
  // Reused nodes share the document's holder: from here on they read the new text.
  holder.text = source;
  return root;
}

/**
 * Copies the node a cursor is on (a statement parsed alone, see statement-reparse.ts) as if it lay at `offset` in
 * `holder`'s text, whose line starts are `lineStarts`.
 */
export function copyCursorAt(cursor: TreeCursor, tree: Tree, holder: SourceText, lineStarts: number[], offset: number): SyntaxNode {
  const context = copyContext(tree, holder, lineStarts);
  context.offset = offset;
  return copyCursorSubtree(cursor, context, false);
}
