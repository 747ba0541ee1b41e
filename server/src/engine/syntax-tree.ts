// A plain JavaScript copy of a tree-sitter tree. The rules ask many small questions of the tree (parents, fields,
// ranges); asked of web-tree-sitter's nodes, each one is a call into WebAssembly and a new wrapper object. One
// cursor walk per document version copies the tree into these objects, and every later question is a field read.
import type { Language, Point, Tree, TreeCursor } from 'web-tree-sitter';
import { computeLineStarts, lineIndexAt } from './lines';
import { PieceText } from './piece-text';
import { startWalk } from './tree-walk';
import type { TreeWalk } from './tree-walk';

/**
 * The text a tree was parsed from, shared by all its nodes; a document's holder follows its versions. Its text is
 * kept as pieces (piece-text.ts): the nodes read their text from them, and the whole text is made only when asked.
 */
export class SourceText {
  content: PieceText;
  /** Where the rows of `rowStartsContent` start: read by rowStartsOf, which makes them again when the text moved on. */
  rowStarts: readonly number[] | undefined;
  rowStartsContent: PieceText | undefined;

  constructor(text: string | PieceText, lineStarts?: readonly number[]) {
    this.content = typeof text === 'string' ? PieceText.of(text) : text;
    if (lineStarts) {
      this.rowStarts = lineStarts;
      this.rowStartsContent = this.content;
    }
  }

  /** The whole text (made from the pieces if they are several). */
  get text(): string {
    return this.content.text;
  }
}

/** Where each row of the holder's text starts (lines.ts), made once per text. */
function rowStartsOf(source: SourceText): readonly number[] {
  if (source.rowStartsContent !== source.content) {
    source.rowStarts = computeLineStarts(source.content.text);
    source.rowStartsContent = source.content;
  }
  return source.rowStarts!;
}

/**
 * Moves a holder, and so every node that reads it, on to the next version's text; `lineStarts` are that text's
 * (computeLineStarts), when the caller has them.
 */
export function setSourceText(source: SourceText, text: string | PieceText, lineStarts?: readonly number[]): void {
  source.content = typeof text === 'string' ? PieceText.of(text) : text;
  if (lineStarts) {
    source.rowStarts = lineStarts;
    source.rowStartsContent = source.content;
  }
}

/** Texts up to this length are copied rather than sliced (SyntaxNode.text). */
const OWN_COPY_MAX_LENGTH = 80;
/** V8 copies a slice shorter than this (SlicedString::kMinLength); a longer one is a view into its string. */
const SLICE_VIEW_MIN_LENGTH = 13;

/** Bits of SyntaxNode's flags. */
const NAMED = 1;
const MISSING = 2;
const HAS_ERROR = 4;

/** The children of every leaf, and the fields of every node whose children have none: one shared empty array. */
const NO_NODES: readonly SyntaxNode[] = Object.freeze([]);
const NO_FIELDS: ReadonlyArray<string | null> = Object.freeze([]);

/**
 * Where the nodes of one top-level statement lie: their offsets and rows are kept relative to it, so that an edit
 * before the statement moves it (copyTreeIncremental, statement-reparse.ts) by changing these two numbers, not the
 * three of each of its nodes (typing a character near the top of a 20,000-line script moved 120,000 nodes, about 10
 * ms a keystroke). The statement's own node is `owner`; a root (not a statement) has a placement of its own.
 */
export class Placement {
  owner: SyntaxNode | undefined;
  /** Values computed for the statement's nodes (node-memo.ts): they live as long as the nodes do. */
  memos: unknown[] | undefined = undefined;

  constructor(
    readonly source: SourceText,
    public index: number,
    public row: number,
  ) {}
}

// A copy holds a node per tree-sitter node (twelve for each line of a training script), so each is kept small:
// its positions are three small integers, its offsets and start row relative to its statement's placement (its
// columns and end row are read from where its text's rows start, and the Point objects are made when asked for),
// its flags one, and a leaf's children and a node's absent fields are shared empty arrays.
export class SyntaxNode {
  parent: SyntaxNode | null = null;
  /** Set once, when the copy leaves the node (exactly sized: a copy is long-lived). */
  children: readonly SyntaxNode[] = NO_NODES;
  /** The field name of each child (`left`, `body`, …) or null where the grammar names none; empty when no child has one. */
  childFields: ReadonlyArray<string | null> = NO_FIELDS;
  private flags: number;
  /** The placement the offsets and the row below are relative to (a text holder, if it is a node's own). */
  private readonly place: Placement;
  private start: number;
  private end: number;
  private row: number;

  /** `place`: the node's statement's placement, or the text holder of a node placed alone (a root). */
  constructor(
    place: Placement | SourceText,
    readonly id: number,
    readonly type: string,
    isNamed: boolean,
    isMissing: boolean,
    startIndex: number,
    endIndex: number,
    startRow: number,
  ) {
    this.flags = (isNamed ? NAMED : 0) | (isMissing ? MISSING : 0);
    this.place = place instanceof Placement ? place : new Placement(place, 0, 0);
    this.start = startIndex - this.place.index;
    this.end = endIndex - this.place.index;
    this.row = startRow - this.place.row;
  }

  get startIndex(): number {
    return this.start + this.place.index;
  }

  set startIndex(value: number) {
    this.start = value - this.place.index;
  }

  get endIndex(): number {
    return this.end + this.place.index;
  }

  set endIndex(value: number) {
    this.end = value - this.place.index;
  }

  get startRow(): number {
    return this.row + this.place.row;
  }

  set startRow(value: number) {
    this.row = value - this.place.row;
  }

  /** The placement this node's offsets are relative to (moveSubtree moves a statement's by moving it). */
  get placement(): Placement {
    return this.place;
  }

  private get sourceRef(): SourceText {
    return this.place.source;
  }

  get startColumn(): number {
    return this.startIndex - rowStartsOf(this.sourceRef)[this.startRow]!;
  }

  /** The row of the end: the start row for most nodes (one step), a few more for a block, searched beyond. */
  get endRow(): number {
    return rowFrom(rowStartsOf(this.sourceRef), this.startRow, this.endIndex);
  }

  get endColumn(): number {
    const rowStarts = rowStartsOf(this.sourceRef);
    return this.endIndex - rowStarts[rowFrom(rowStarts, this.startRow, this.endIndex)]!;
  }

  get startPosition(): Point {
    return { row: this.startRow, column: this.startColumn };
  }

  get endPosition(): Point {
    const rowStarts = rowStartsOf(this.sourceRef);
    const row = rowFrom(rowStarts, this.startRow, this.endIndex);
    return { row, column: this.endIndex - rowStarts[row]! };
  }

  get isNamed(): boolean {
    return (this.flags & NAMED) !== 0;
  }

  get isMissing(): boolean {
    return (this.flags & MISSING) !== 0;
  }

  /** Whether the node is or holds an ERROR or MISSING node. */
  get hasError(): boolean {
    return (this.flags & HAS_ERROR) !== 0;
  }

  set hasError(value: boolean) {
    this.flags = value ? this.flags | HAS_ERROR : this.flags & ~HAS_ERROR;
  }

  /** The whole text the node reads (made from its pieces if they are several: `content` reads them as they are). */
  get source(): string {
    return this.sourceRef.content.text;
  }

  /** The text the node reads, as pieces: slices of it cost no copy of the whole text. */
  get content(): PieceText {
    return this.sourceRef.content;
  }

  get text(): string {
    const text = this.sourceRef.content.slice(this.startIndex, this.endIndex);
    // A slice of 13 characters or more is a view that keeps the whole text it was cut from alive. A short text (a
    // name) is often kept by a model that later versions carry on (their functions, their call indexes), and so
    // kept every version's text: 400 edits of a 5,000-line script left 84 texts, 23 MiB, alive. A short one is
    // copied instead (the concatenation is flattened into a string of its own); a long one stays a view. A slice
    // shorter than 13 characters is already a copy (most names): copying it again made two more strings per read.
    const length = this.endIndex - this.startIndex;
    return length >= SLICE_VIEW_MIN_LENGTH && length <= OWN_COPY_MAX_LENGTH ? (' ' + text).slice(1) : text;
  }

  get isError(): boolean {
    return this.type === 'ERROR';
  }

  /**
   * Most nodes' children are all named: then they are their own named children. The others' are filtered on each
   * call rather than kept: a kept array per node with punctuation among its children (argument lists, calls)
   * held 0.33 MB of every 2,000-line document's 7 MB, for arrays that live a few microseconds when made afresh.
   */
  get namedChildren(): readonly SyntaxNode[] {
    const children = this.children;
    for (let i = 0; i < children.length; i++) {
      if (!children[i]!.isNamed) return children.filter((child) => child.isNamed);
    }
    return children;
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
    // One type (most calls) is compared directly; several are looked up in a set.
    const single = typeof types === 'string' ? types : types.length === 1 ? types[0]! : undefined;
    const wanted = single === undefined ? new Set(types) : undefined;
    const found: SyntaxNode[] = [];
    const stack: SyntaxNode[] = [];
    for (let i = this.children.length - 1; i >= 0; i--) stack.push(this.children[i]!);
    while (stack.length > 0) {
      const node = stack.pop()!;
      if (wanted ? wanted.has(node.type) : node.type === single) found.push(node);
      const children = node.children;
      for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
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

/**
 * Gathers, during a whole-tree copy, the nodes of some types inside each top-level statement: what a separate walk
 * of every statement would find (the semantic model's per-statement node lists), without that second walk.
 */
export interface StatementCollector {
  /** The node types to gather. */
  readonly types: ReadonlySet<string>;
  /** Called once a top-level statement is copied, with its gathered nodes in document order (itself first, if gathered). */
  statement(statement: SyntaxNode, nodes: SyntaxNode[]): void;
}

/** Copies a tree-sitter tree into SyntaxNodes with one cursor walk (handing each top-level statement's nodes of some types to `collector`). */
export function copyTree(tree: Tree, source: string | SourceText, collector?: StatementCollector): SyntaxNode {
  const ref = typeof source === 'string' ? new SourceText(source) : source;
  const context = copyContext(tree, ref);
  context.statementsAt = 1;
  if (collector) context.collector = { collector, byTypeId: collectedTypeIds(tree.language, collector.types) };
  const cursor = tree.walk();
  const root = copySubtreeAt(tree, cursor, context);
  cursor.delete();
  return root;
}

const collectedTables = new WeakMap<Language, WeakMap<ReadonlySet<string>, boolean[]>>();

/** Whether each type id is one of `types` (by name, so every alias of a type counts). */
function collectedTypeIds(language: Language, types: ReadonlySet<string>): boolean[] {
  let byTypes = collectedTables.get(language);
  if (!byTypes) collectedTables.set(language, (byTypes = new WeakMap()));
  let table = byTypes.get(types);
  if (!table) {
    table = language.types.map((type) => types.has(type));
    table[ERROR_TYPE_ID] = types.has('ERROR');
    byTypes.set(types, table);
  }
  return table;
}

/** What a copy needs besides the walk: the text, where its rows start, and the grammar's name tables. */
interface CopyContext {
  source: SourceText;
  /** Offsets where rows start (tree-sitter parses the text with lone `\r` read as `\n`, see lines.ts). */
  rowStarts: readonly number[];
  types: readonly string[];
  fields: ReadonlyArray<string | null>;
  /** Whether each type id is a named node's (read before a walk: the walk owns the runtime while it runs). */
  named: readonly boolean[];
  /** Added to the walk's offsets: a statement parsed alone starts at 0 but lies at this offset in the document. */
  offset: number;
  /** How deep below the walk's first node the top-level statements are: 1 below a module, 0 for a statement's own walk. */
  statementsAt: 0 | 1;
  /** Gathers each top-level statement's nodes of some types (a whole-tree copy only, see copyTree). */
  collector?: { collector: StatementCollector; byTypeId: readonly boolean[] };
}

/** ERROR's type id (tree-sitter's builtin error symbol, 65535 as an unsigned 16-bit symbol). */
const ERROR_TYPE_ID = 0xffff;

const namedTables = new WeakMap<Language, boolean[]>();

function namedTable(language: Language): boolean[] {
  let table = namedTables.get(language);
  if (!table) {
    table = [];
    for (let id = 0; id < language.nodeTypeCount; id++) table[id] = language.nodeTypeIsNamed(id);
    table[ERROR_TYPE_ID] = language.nodeTypeIsNamed(ERROR_TYPE_ID);
    namedTables.set(language, table);
  }
  return table;
}

function copyContext(tree: Tree, source: SourceText, lineStarts?: readonly number[]): CopyContext {
  const rowStarts = lineStarts ?? rowStartsOf(source);
  const language = tree.language;
  return { source, rowStarts, types: language.types, fields: language.fields, named: namedTable(language), offset: 0, statementsAt: 0 };
}

/**
 * The row of `offset`, at or after row `from`: a copy meets offsets in document order, so the next node's row is
 * usually a step or two on; further, a binary search.
 */
function rowFrom(rowStarts: readonly number[], from: number, offset: number): number {
  if (rowStarts[from]! > offset) return lineIndexAt(rowStarts, offset);
  let row = from;
  for (let steps = 0; steps < 8; steps++) {
    const next = rowStarts[row + 1];
    if (next === undefined || next > offset) return row;
    row++;
  }
  return lineIndexAt(rowStarts, offset);
}

/** Children (and their field ids) of the nodes still open in a walk, each node's after its parent's; emptied after each walk. */
const pendingChildren: SyntaxNode[] = [];
const pendingFieldIds: number[] = [];

/** The field names of a run of children, by their field ids one after another (a trie over the ids). */
interface FieldPatterns {
  next: Map<number, FieldPatterns>;
  names?: ReadonlyArray<string | null>;
}

const fieldPatternsByGrammar = new WeakMap<ReadonlyArray<string | null>, FieldPatterns>();

/**
 * The childFields array of children with these field ids, one shared array per pattern: a grammar has few of them
 * (19 in a training script, for 11,000 nodes with fields in 5,000 lines).
 */
function sharedFieldNames(fields: ReadonlyArray<string | null>, ids: readonly number[], from: number, to: number): ReadonlyArray<string | null> {
  let patterns: FieldPatterns | undefined = fieldPatternsByGrammar.get(fields);
  if (!patterns) fieldPatternsByGrammar.set(fields, (patterns = { next: new Map() }));
  for (let i = from; i < to; i++) {
    const id = ids[i]!;
    let next: FieldPatterns | undefined = patterns.next.get(id);
    if (!next) patterns.next.set(id, (next = { next: new Map() }));
    patterns = next;
  }
  patterns.names ??= Object.freeze(ids.slice(from, to).map((id) => fields[id] ?? null));
  return patterns.names;
}

/** Where each open node's children start in the pending arrays, and whether any of them has a field, by depth. */
const openNodes: SyntaxNode[] = [];
const openFirstChild: number[] = [];
const openAnyField: boolean[] = [];

/**
 * Copies the node the walk is at and its subtree; the walk ends where it started. Each node costs four questions
 * (type id, start, end, field id); names come from the grammar's tables and rows and columns from the text, which
 * is what makes this walk cheap. The open nodes are kept in module-level arrays indexed by depth (no per-node
 * closures, pushes or pops): a 70,000-line script has 820,000 nodes.
 */
function copyWalkSubtree(walk: TreeWalk, context: CopyContext): SyntaxNode {
  const { source, rowStarts, types, named, fields, offset, statementsAt } = context;
  const collector = context.collector?.collector;
  const collectedType = context.collector?.byTypeId;
  let collected: SyntaxNode[] = [];
  let row = lineIndexAt(rowStarts, walk.startIndex() + offset);
  let typeId = 0;
  // Entries past `pending` are stale until the walk ends (truncating the arrays node by node costs more).
  const base = pendingChildren.length;
  let pending = base;
  // A walk may start inside another's (never while one runs, but the arrays are shared): this one's depths follow.
  const bottom = openNodes.length;
  let depth = bottom;
  /** Copies the node the walk is at: placed within `place`, or at a placement of its own (a statement, the walk's first node). */
  const make = (place: Placement | undefined): SyntaxNode => {
    typeId = walk.typeId();
    const startIndex = walk.startIndex() + offset;
    const endIndex = walk.endIndex() + offset;
    // Only a zero-width node can be one that the parser inserted (MISSING).
    const isMissing = startIndex === endIndex && walk.isMissing();
    row = rowFrom(rowStarts, row, startIndex);
    const own = place ?? new Placement(source, startIndex, row);
    const node = new SyntaxNode(own, nextId++, types[typeId] ?? 'ERROR', named[typeId] ?? true, isMissing, startIndex, endIndex, row);
    if (!place) own.owner = node;
    return node;
  };
  const root = make(undefined);
  openNodes[depth] = root;
  openFirstChild[depth] = pending;
  openAnyField[depth] = false;
  try {
    for (;;) {
      let moved = walk.gotoFirstChild();
      // Left for good: close the open nodes (children final, errors upwards) until one has a next sibling.
      while (!moved) {
        const node = openNodes[depth]!;
        const from = openFirstChild[depth]!;
        if (pending > from) {
          node.children = pendingChildren.slice(from, pending);
          if (openAnyField[depth]) node.childFields = sharedFieldNames(fields, pendingFieldIds, from, pending);
          pending = from;
        }
        if (node.type === 'ERROR' || node.isMissing) node.hasError = true;
        if (node === root) return root;
        if (node.hasError) node.parent!.hasError = true;
        if (collector && depth === bottom + 1) {
          collector.statement(node, collected);
          collected = [];
        }
        depth--;
        moved = walk.gotoNextSibling();
        if (!moved && !walk.gotoParent()) return root;
      }
      // At a first child (depth: its parent's) or a next sibling (depth: its own, closed just above). A top-level
      // statement gets a placement of its own; any other node is placed within its parent's.
      const parent = openNodes[depth]!;
      const child = make(depth - bottom + 1 === statementsAt ? undefined : parent.placement);
      if (collectedType?.[typeId]) collected.push(child);
      child.parent = parent;
      const fieldId = walk.fieldId();
      pendingChildren[pending] = child;
      pendingFieldIds[pending] = fieldId;
      pending++;
      if (fields[fieldId] != null) openAnyField[depth] = true;
      depth++;
      openNodes[depth] = child;
      openFirstChild[depth] = pending;
      openAnyField[depth] = false;
    }
  } finally {
    pendingChildren.length = base;
    pendingFieldIds.length = base;
    openNodes.length = bottom;
    openFirstChild.length = bottom;
    openAnyField.length = bottom;
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
  // A statement's nodes are placed within its placement, and no other node is: moving it moves them all.
  const placement = node.placement;
  if (placement.owner === node) {
    placement.index += indexDelta;
    placement.row += rowDelta;
    return;
  }
  const stack = [node];
  while (stack.length > 0) {
    const current = stack.pop()!;
    {
      current.startIndex += indexDelta;
      current.endIndex += indexDelta;
      current.startRow += rowDelta;
    }
    for (const child of current.children) stack.push(child);
  }
}

/** Copies the subtree of the node `cursor` is at; the cursor stays there. */
function copySubtreeAt(tree: Tree, cursor: TreeCursor, context: CopyContext): SyntaxNode {
  const walk = startWalk(tree, cursor);
  try {
    return copyWalkSubtree(walk, context);
  } finally {
    walk.finish();
  }
}

/**
 * Copies a tree after one edit, moving the top-level statements that the edit did not touch out of the previous
 * copy instead of copying them again. A statement is reused only when it lies wholly before the edit, or starts
 * on a later line than the edit's end (so its columns are unchanged), and has the same type and text as before.
 */
export function copyTreeIncremental(tree: Tree, holder: SourceText, source: string | PieceText, previous: SyntaxNode, edit: SingleEdit, lineStarts?: number[]): SyntaxNode {
  const indexDelta = edit.newEndIndex - edit.oldEndIndex;
  const rowDelta = edit.newEndRow - edit.oldEndRow;
  const oldByStart = new Map<number, SyntaxNode>();
  for (const child of previous.children) oldByStart.set(child.startIndex, child);
  // The document's line starts, when the caller kept them up to date (computeLineStarts of `source`).
  const context = copyContext(tree, new SourceText(source), lineStarts);
  // New subtrees read the document's holder, like the statements moved from the previous copy.
  context.source = holder;
  const cursor = tree.walk();
  const rootStart = cursor.startIndex;
  const rootEnd = cursor.endIndex;
  const { rowStarts } = context;
  const root = new SyntaxNode(holder, nextId++, cursor.nodeType, cursor.nodeIsNamed, cursor.nodeIsMissing, rootStart, rootEnd,
    lineIndexAt(rowStarts, rootStart));
  const children: SyntaxNode[] = [];
  const childFields: Array<string | null> = [];
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
      const child = reused ?? copySubtreeAt(tree, cursor, context);
      child.parent = root;
      children.push(child);
      childFields.push(cursor.currentFieldName ?? null);
      root.hasError ||= child.hasError;
    } while (cursor.gotoNextSibling());
  }
  cursor.delete();
  root.children = children;
  if (childFields.some((field) => field !== null)) root.childFields = childFields;
  // Reused nodes share the document's holder: from here on they read the new text.
  setSourceText(holder, source, rowStarts);
  return root;
}

/**
 * Copies the top-level statements of a tree parsed from part of `holder`'s text (engine/parse-in-parts.ts), as if the
 * part lay at `offset` in that text, whose line starts are `lineStarts`; each statement's nodes of some types go to
 * `collector`. The statements' parent is the part's module (a copy): the caller gives them the document's.
 */
export function copyStatementsAt(tree: Tree, holder: SourceText, lineStarts: readonly number[], offset: number, collector?: StatementCollector): readonly SyntaxNode[] {
  const context = copyContext(tree, holder, lineStarts);
  context.offset = offset;
  context.statementsAt = 1;
  if (collector) context.collector = { collector, byTypeId: collectedTypeIds(tree.language, collector.types) };
  const cursor = tree.walk();
  try {
    return copySubtreeAt(tree, cursor, context).children;
  } finally {
    cursor.delete();
  }
}

/**
 * Copies the node a cursor is on (a statement parsed alone, see statement-reparse.ts) as if it lay at `offset` in
 * `holder`'s text, whose line starts are `lineStarts`.
 */
export function copyCursorAt(cursor: TreeCursor, tree: Tree, holder: SourceText, lineStarts: number[], offset: number): SyntaxNode {
  const context = copyContext(tree, holder, lineStarts);
  context.offset = offset;
  return copySubtreeAt(tree, cursor, context);
}
