// A JavaScript copy of a tree-sitter tree. The rules ask many small questions of the tree (parents, fields, ranges);
// asked of web-tree-sitter's nodes, each one is a call into WebAssembly and a new wrapper object. One cursor walk per
// document version copies the tree into a table of numbers (NodeTable), and every later question reads it. A node's
// object (SyntaxNode) is made when first asked for: a copy of one object per node cost 100 bytes a node of the
// JavaScript heap, each of which the young-generation collections copied and promoted while the copy was made.
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

/** Bits of a node's flags (a table row's first word, above its type id). */
const NAMED = 1;
const MISSING = 2;
const HAS_ERROR = 4;
/** The node's children were given (a root's: its statements lie in placements of their own), not read from its rows. */
const GIVEN_CHILDREN = 8;

/** Where a row's words lie in a table: the first holds the type id (16 bits), the flags (4) and the field id (12: a grammar has a few dozen). */
const KIND = 0;
const START = 1;
const END = 2;
const ROW = 3;
const PARENT = 4;
const SUBTREE_END = 5;
const ROW_WORDS = 6;
const FLAGS_SHIFT = 16;
const FIELD_SHIFT = 20;

/** The children of every leaf, and the fields of every node whose children have none: one shared empty array. */
const NO_NODES: readonly SyntaxNode[] = Object.freeze([]);
const NO_FIELDS: ReadonlyArray<string | null> = Object.freeze([]);

/**
 * The nodes of one copy, a row of six 32-bit words per node in document order (each node's descendants right after
 * it): type id, flags and field id; start and end offsets and start row, relative to the node's placement; the row
 * of its parent; the row after its last descendant. A node object (SyntaxNode) is made for a row only when something
 * asks for that node, and kept by its placement: the analysis of a training script asks for about six in ten.
 */
class NodeTable {
  constructor(
    readonly data: Int32Array,
    /** Type names by type id (the grammar's, or a root's own one). */
    readonly types: readonly string[],
    readonly fields: ReadonlyArray<string | null>,
    /** The id of the node of row 0: a row's node has this plus its row. */
    readonly idBase: number,
  ) {}
}

/**
 * Where the nodes of one top-level statement lie: their offsets and rows are kept relative to it, so that an edit
 * before the statement moves it (copyTreeIncremental, statement-reparse.ts) by changing these two numbers, not the
 * three of each of its nodes (typing a character near the top of a 20,000-line script moved 120,000 nodes, about 10
 * ms a keystroke). The statement's own node is `owner`, its row `first`; a root (not a statement) has a placement of
 * its own. The node objects of the statement's rows are kept here, so that they die with it.
 */
export class Placement {
  owner: SyntaxNode | undefined;
  /** Values computed for the statement's nodes (node-memo.ts): they live as long as the nodes do. */
  memos: unknown[] | undefined = undefined;
  /** The owner's parent (a statement's module), which lies in another placement. */
  ownerParent: SyntaxNode | null = null;
  /** The field names of the owner's given children (a root's), when any has one. */
  givenFields: ReadonlyArray<string | null> = NO_FIELDS;
  table!: NodeTable;
  /** The owner's row in the table. */
  first = 0;
  /** The node objects made for the rows after the owner's, by row - first - 1. */
  private nodes: Array<SyntaxNode | undefined> | undefined = undefined;

  constructor(
    readonly source: SourceText,
    public index: number,
    public row: number,
  ) {}

  /** The node of a row within this placement, made when first asked for. */
  nodeAt(row: number): SyntaxNode {
    if (row === this.first) return this.owner!;
    const nodes = (this.nodes ??= new Array<SyntaxNode | undefined>(this.table.data[this.first * ROW_WORDS + SUBTREE_END]! - this.first - 1));
    return (nodes[row - this.first - 1] ??= new SyntaxNode(this, row));
  }
}

// A copy holds a node per tree-sitter node (twelve for each line of a training script): they lie in a table of
// numbers (NodeTable), out of the JavaScript heap's reach, and an object is made for a node when the analysis asks
// for it. An object is its placement and row, its type (read on most visits) and its children once asked for.
export class SyntaxNode {
  readonly type: string;
  /** The children, once asked for (or given: a root's); made exactly sized. */
  private kids: readonly SyntaxNode[] | undefined = undefined;

  /** The node of `row` in `place`'s table (Placement.nodeAt makes each once). */
  constructor(
    private readonly place: Placement,
    private readonly at: number,
  ) {
    const table = place.table;
    this.type = table.types[table.data[at * ROW_WORDS + KIND]! & 0xffff] ?? 'ERROR';
  }

  private get data(): Int32Array {
    return this.place.table.data;
  }

  private get flags(): number {
    return (this.data[this.at * ROW_WORDS + KIND]! >>> FLAGS_SHIFT) & 0xf;
  }

  private setFlag(flag: number, on: boolean): void {
    const data = this.data;
    const word = this.at * ROW_WORDS + KIND;
    data[word] = on ? data[word]! | (flag << FLAGS_SHIFT) : data[word]! & ~(flag << FLAGS_SHIFT);
  }

  /** Unique across versions, so nodes moved into a new version keep theirs. */
  get id(): number {
    return this.place.table.idBase + this.at;
  }

  get parent(): SyntaxNode | null {
    const place = this.place;
    if (this.at === place.first) return place.ownerParent;
    return place.nodeAt(this.data[this.at * ROW_WORDS + PARENT]!);
  }

  /** Only a placement's own node (a statement, a root) is given a parent: another node's is its table's. */
  set parent(value: SyntaxNode | null) {
    if (this.at !== this.place.first) throw new Error('only a statement or a root is given a parent');
    this.place.ownerParent = value;
  }

  get children(): readonly SyntaxNode[] {
    return (this.kids ??= this.rowChildren());
  }

  /** Gives a root its children (statements placed on their own). */
  set children(value: readonly SyntaxNode[]) {
    this.kids = value;
    this.setFlag(GIVEN_CHILDREN, true);
  }

  private rowChildren(): readonly SyntaxNode[] {
    const data = this.data;
    const end = data[this.at * ROW_WORDS + SUBTREE_END]!;
    if (end === this.at + 1) return NO_NODES;
    const place = this.place;
    const children: SyntaxNode[] = [];
    for (let row = this.at + 1; row < end; row = data[row * ROW_WORDS + SUBTREE_END]!) children.push(place.nodeAt(row));
    return children;
  }

  /** The field name of each child (`left`, `body`, …) or null where the grammar names none; empty when no child has one. */
  get childFields(): ReadonlyArray<string | null> {
    if (this.kids && (this.flags & GIVEN_CHILDREN) !== 0) return this.place.givenFields;
    const { data, fields } = this.place.table;
    const end = data[this.at * ROW_WORDS + SUBTREE_END]!;
    const names: Array<string | null> = [];
    let any = false;
    for (let row = this.at + 1; row < end; row = data[row * ROW_WORDS + SUBTREE_END]!) {
      const name = fields[data[row * ROW_WORDS + KIND]! >>> FIELD_SHIFT] ?? null;
      any ||= name !== null;
      names.push(name);
    }
    return any ? names : NO_FIELDS;
  }

  /** Sets the given children's field names (a root's: its statements', which lie in other tables). */
  set childFields(value: ReadonlyArray<string | null>) {
    this.place.givenFields = value;
  }

  private get given(): boolean {
    return (this.flags & GIVEN_CHILDREN) !== 0;
  }

  get startIndex(): number {
    return this.data[this.at * ROW_WORDS + START]! + this.place.index;
  }

  set startIndex(value: number) {
    this.data[this.at * ROW_WORDS + START] = value - this.place.index;
  }

  get endIndex(): number {
    return this.data[this.at * ROW_WORDS + END]! + this.place.index;
  }

  set endIndex(value: number) {
    this.data[this.at * ROW_WORDS + END] = value - this.place.index;
  }

  get startRow(): number {
    return this.data[this.at * ROW_WORDS + ROW]! + this.place.row;
  }

  set startRow(value: number) {
    this.data[this.at * ROW_WORDS + ROW] = value - this.place.row;
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
    this.setFlag(HAS_ERROR, value);
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
    const start = this.startIndex;
    const end = this.endIndex;
    const text = this.sourceRef.content.slice(start, end);
    // A slice of 13 characters or more is a view that keeps the whole text it was cut from alive. A short text (a
    // name) is often kept by a model that later versions carry on (their functions, their call indexes), and so
    // kept every version's text: 400 edits of a 5,000-line script left 84 texts, 23 MiB, alive. A short one is
    // copied instead (the concatenation is flattened into a string of its own); a long one stays a view. A slice
    // shorter than 13 characters is already a copy (most names): copying it again made two more strings per read.
    const length = end - start;
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
    if (this.given) {
      const index = this.place.givenFields.indexOf(field);
      return index < 0 ? null : this.kids![index]!;
    }
    // Read from the rows: only the child asked for is made.
    const { data, fields } = this.place.table;
    const end = data[this.at * ROW_WORDS + SUBTREE_END]!;
    for (let row = this.at + 1; row < end; row = data[row * ROW_WORDS + SUBTREE_END]!) {
      if (fields[data[row * ROW_WORDS + KIND]! >>> FIELD_SHIFT] === field) return this.place.nodeAt(row);
    }
    return null;
  }

  childrenForFieldName(field: string): SyntaxNode[] {
    const fields = this.childFields;
    return this.children.filter((_, i) => fields[i] === field);
  }

  /** Descendants (not the node itself) of the given types, in document order. */
  descendantsOfType(types: string | readonly string[]): SyntaxNode[] {
    // One type (most calls) is compared directly; several are looked up in a set.
    const single = typeof types === 'string' ? types : types.length === 1 ? types[0]! : undefined;
    const wanted = single === undefined ? new Set(types) : undefined;
    const found: SyntaxNode[] = [];
    this.gatherDescendants(single, wanted, found);
    return found;
  }

  private gatherDescendants(single: string | undefined, wanted: ReadonlySet<string> | undefined, found: SyntaxNode[]): void {
    if (this.given) {
      for (const child of this.kids!) {
        if (wanted ? wanted.has(child.type) : child.type === single) found.push(child);
        child.gatherDescendants(single, wanted, found);
      }
      return;
    }
    // The descendants are the rows after the node's, up to its subtree's end: only the ones found are made.
    const place = this.place;
    const { data, types } = place.table;
    const end = data[this.at * ROW_WORDS + SUBTREE_END]!;
    for (let row = this.at + 1; row < end; row++) {
      const type = types[data[row * ROW_WORDS + KIND]! & 0xffff] ?? 'ERROR';
      if (wanted ? wanted.has(type) : type === single) found.push(place.nodeAt(row));
    }
  }
}

// Ids are unique across versions, so nodes moved into a new version keep theirs.
let nextId = 0;

/**
 * A node made outside a copy, placed alone (a new version's root, whose children are given): its own one-row table.
 */
export function standaloneNode(source: SourceText, type: string, isNamed: boolean, isMissing: boolean, startIndex: number, endIndex: number, startRow: number): SyntaxNode {
  const data = new Int32Array(ROW_WORDS);
  data[KIND] = ((isNamed ? NAMED : 0) | (isMissing ? MISSING : 0)) << FLAGS_SHIFT;
  data[END] = endIndex - startIndex;
  data[PARENT] = -1;
  data[SUBTREE_END] = 1;
  const place = new Placement(source, startIndex, startRow);
  place.table = new NodeTable(data, [type], NO_FIELDS, nextId++);
  const node = new SyntaxNode(place, 0);
  place.owner = node;
  return node;
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

/** The rows a walk writes, grown as needed and kept for the next walk; a table takes an exactly sized copy. */
const SCRATCH_ROWS = 4096;
let scratch = new Int32Array(ROW_WORDS * SCRATCH_ROWS);
/** A walk that grew the rows past this many (a whole long file's) gives them back: they would stay resident. */
const KEPT_SCRATCH_ROWS = 65536;

function ensureRows(rows: number): void {
  if (rows * ROW_WORDS <= scratch.length) return;
  const grown = new Int32Array(Math.max(scratch.length * 2, rows * ROW_WORDS));
  grown.set(scratch);
  scratch = grown;
}

/** The row of each node still open in a walk, by depth. */
const openRows: number[] = [];
/** Whether a walk is writing the scratch rows (walks never nest: the direct walk owns the runtime while it runs). */
let walking = false;

/**
 * Copies the node the walk is at and its subtree into a table; the walk ends where it started. Each node costs four
 * questions (type id, start, end, field id) and one row of numbers; names come from the grammar's tables and rows
 * and columns from the text. Objects are made for the walk's first node and the top-level statements (each with a
 * placement of its own), and for the nodes of the types the collector gathers.
 */
function copyWalkSubtree(walk: TreeWalk, context: CopyContext): SyntaxNode {
  if (walking) throw new Error('a tree copy started inside another');
  walking = true;
  const { source, rowStarts, types, named, offset, statementsAt } = context;
  const collectedType = context.collector?.byTypeId;
  let row = lineIndexAt(rowStarts, walk.startIndex() + offset);
  let next = 0;
  const placements: Placement[] = [];
  /** The top-level statements' placements, and each one's collected rows (from collectedFrom[i] on). */
  const statements: Placement[] = [];
  const collectedRows: number[] = [];
  const collectedFrom: number[] = [];
  /** The placement of the nodes being written: the walk's first node's, then each top-level statement's. */
  let place: Placement | undefined;
  // The walk's depth is counted from its first node (0); top-level statements are at `statementsAt`.
  let depth = 0;
  /** Writes the row of the node the walk is at, under the open node at `depth - 1` (none for the first). */
  const write = (fieldId: number): void => {
    const typeId = walk.typeId();
    const startIndex = walk.startIndex() + offset;
    const endIndex = walk.endIndex() + offset;
    // Only a zero-width node can be one that the parser inserted (MISSING).
    const isMissing = startIndex === endIndex && walk.isMissing();
    row = rowFrom(rowStarts, row, startIndex);
    // The walk's first node and each top-level statement are placed on their own; any other node within its statement's.
    if (depth === 0 || depth === statementsAt) {
      place = new Placement(source, startIndex, row);
      place.first = next;
      placements.push(place);
      if (depth === statementsAt && depth > 0) {
        statements.push(place);
        collectedFrom.push(collectedRows.length);
      }
    }
    if (collectedType?.[typeId] && depth > 0 && depth >= statementsAt) collectedRows.push(next);
    ensureRows(next + 1);
    const word = next * ROW_WORDS;
    const flags = (named[typeId] ?? true ? NAMED : 0) | (isMissing ? MISSING : 0) | ((types[typeId] ?? 'ERROR') === 'ERROR' || isMissing ? HAS_ERROR : 0);
    scratch[word + KIND] = typeId | (flags << FLAGS_SHIFT) | (fieldId << FIELD_SHIFT);
    scratch[word + START] = startIndex - place!.index;
    scratch[word + END] = endIndex - place!.index;
    scratch[word + ROW] = row - place!.row;
    scratch[word + PARENT] = depth === 0 ? -1 : openRows[depth - 1]!;
    openRows[depth] = next;
    next++;
  };
  try {
    write(0);
    for (;;) {
      let moved = walk.gotoFirstChild();
      // Left for good: close the open nodes (subtree ends, errors upwards) until one has a next sibling.
      while (!moved) {
        const closed = openRows[depth]!;
        scratch[closed * ROW_WORDS + SUBTREE_END] = next;
        if (depth === 0) return finishCopy(context, placements, statements, collectedRows, collectedFrom, next);
        if ((scratch[closed * ROW_WORDS + KIND]! >>> FLAGS_SHIFT) & HAS_ERROR) scratch[openRows[depth - 1]! * ROW_WORDS + KIND] |= HAS_ERROR << FLAGS_SHIFT;
        depth--;
        moved = walk.gotoNextSibling();
        if (!moved && !walk.gotoParent()) {
          // The walk could not climb back to its first node: the nodes still open end where the rows do.
          for (let open = depth; open >= 0; open--) scratch[openRows[open]! * ROW_WORDS + SUBTREE_END] = next;
          return finishCopy(context, placements, statements, collectedRows, collectedFrom, next);
        }
      }
      // At a child of the open node at `depth`: a top-level statement gets a placement of its own (write), any other
      // node is placed within its statement's (the newest placement).
      depth++;
      write(walk.fieldId());
    }
  } finally {
    openRows.length = 0;
    walking = false;
    if (scratch.length > ROW_WORDS * KEPT_SCRATCH_ROWS) scratch = new Int32Array(ROW_WORDS * SCRATCH_ROWS);
  }
}

/** Makes a walk's table and the objects of its placements; hands each statement's gathered nodes to the collector. */
function finishCopy(context: CopyContext, placements: readonly Placement[], statements: readonly Placement[], collectedRows: readonly number[], collectedFrom: readonly number[], rows: number): SyntaxNode {
  const table = new NodeTable(scratch.slice(0, rows * ROW_WORDS), context.types, context.fields, nextId);
  nextId += rows;
  for (const place of placements) {
    place.table = table;
    place.owner = new SyntaxNode(place, place.first);
  }
  const root = placements[0]!.owner!;
  if (context.statementsAt === 1) {
    // The statements lie in placements of their own: the root's children are given.
    root.children = statements.map((place) => place.owner!);
    root.childFields = fieldNamesOf(context.fields, statements.map((place) => table.data[place.first * ROW_WORDS + KIND]! >>> FIELD_SHIFT));
    for (const place of statements) place.ownerParent = root;
  }
  const collector = context.collector?.collector;
  if (collector) {
    statements.forEach((place, i) => {
      const end = i + 1 < statements.length ? collectedFrom[i + 1]! : collectedRows.length;
      const nodes: SyntaxNode[] = [];
      for (let k = collectedFrom[i]!; k < end; k++) nodes.push(place.nodeAt(collectedRows[k]!));
      collector.statement(place.owner!, nodes);
    });
  }
  return root;
}

/** The field names of children with these field ids, or the shared empty array when none has one. */
function fieldNamesOf(fields: ReadonlyArray<string | null>, ids: readonly number[]): ReadonlyArray<string | null> {
  const names = ids.map((id) => fields[id] ?? null);
  return names.some((name) => name !== null) ? names : NO_FIELDS;
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
    current.startIndex += indexDelta;
    current.endIndex += indexDelta;
    current.startRow += rowDelta;
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
  const root = standaloneNode(holder, cursor.nodeType, cursor.nodeIsNamed, cursor.nodeIsMissing, rootStart, rootEnd, lineIndexAt(rowStarts, rootStart));
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

/**
 * A copy's nodes as one table (the memory estimate's worker reads it instead of parsing the text again,
 * estimate-worker.ts): the root's row (absolute), then each top-level statement's rows, in document order, as its
 * own table holds them. `statements` says, per statement, its first row here, its placement's offset and row (its
 * rows' offsets and rows are relative to them), and how far its rows moved from its own table's (its parent and
 * subtree-end rows are still its table's: the reader moves them, off the server's thread). Type and field ids are the
 * grammar's (`types`, `fields`).
 */
export interface FlatTree {
  data: Int32Array;
  statements: Int32Array;
  types: readonly string[];
  fields: ReadonlyArray<string | null>;
}

/** Words per statement in FlatTree.statements: first row, offset, row, how far its rows moved. */
const FLAT_STATEMENT_WORDS = 4;

/** Flattens a copy whose root's children are its top-level statements (every document's copy), at once. */
export function flattenTree(root: SyntaxNode, types: readonly string[], fields: ReadonlyArray<string | null>): FlatTree {
  const flat = startFlatTree(root, types, fields);
  while (flat.next()) {
    // Every statement, without a pause.
  }
  return flat.tree;
}

/**
 * Flattens a copy in slices of the server's thread, pausing between them (setImmediate: the editor's messages that
 * came meanwhile are handled first); undefined once `stillCurrent` says the copy is no longer the document's (edited
 * meanwhile: its statements may have moved). Its rows are copied statement by statement, a block each, into a table
 * whose memory the system maps as it is first written: a 20,000-line script's 5 MiB took 16-30 ms at once here.
 */
export async function flattenTreeInSlices(root: SyntaxNode, types: readonly string[], fields: ReadonlyArray<string | null>, stillCurrent: () => boolean): Promise<FlatTree | undefined> {
  const flat = startFlatTree(root, types, fields);
  for (let sliceStart = performance.now(); flat.next(); ) {
    if (performance.now() - sliceStart < FLATTEN_SLICE_MS) continue;
    await new Promise((resolve) => setImmediate(resolve));
    if (!stillCurrent()) return undefined;
    sliceStart = performance.now();
  }
  return flat.tree;
}

/** How long one slice of flattenTreeInSlices runs. */
const FLATTEN_SLICE_MS = 2;

/** A flattening under way: `next` copies the next statement's rows, and says whether one was left to copy. */
function startFlatTree(root: SyntaxNode, types: readonly string[], fields: ReadonlyArray<string | null>): { tree: FlatTree; next(): boolean } {
  const statements = root.children;
  let rows = 1;
  for (const statement of statements) {
    const place = statement.placement;
    rows += place.table.data[place.first * ROW_WORDS + SUBTREE_END]! - place.first;
  }
  const data = new Int32Array(rows * ROW_WORDS);
  const placed = new Int32Array(statements.length * FLAT_STATEMENT_WORDS);
  const rootPlace = root.placement;
  const rootKind = rootPlace.table.data[rootPlace.first * ROW_WORDS + KIND]!;
  const rootFlags = (rootKind >>> FLAGS_SHIFT) & 0xf & ~GIVEN_CHILDREN;
  data[KIND] = grammarId(rootKind & 0xffff, rootPlace.table.types, types) | (rootFlags << FLAGS_SHIFT);
  data[START] = root.startIndex;
  data[END] = root.endIndex;
  data[ROW] = root.startRow;
  data[PARENT] = -1;
  data[SUBTREE_END] = rows;
  const statementFields = root.childFields;
  let next = 1;
  let i = 0;
  const copyStatement = (): boolean => {
    if (i >= statements.length) return false;
    const place = statements[i]!.placement;
    const { data: from, types: ownTypes, fields: ownFields } = place.table;
    const first = place.first;
    const end = from[first * ROW_WORDS + SUBTREE_END]!;
    data.set(from.subarray(first * ROW_WORDS, end * ROW_WORDS), next * ROW_WORDS);
    // A table whose names are not the grammar's (none a copy makes): its rows are given the grammar's ids.
    if (ownTypes !== types || ownFields !== fields) {
      for (let row = next; row < next + end - first; row++) {
        const kind = data[row * ROW_WORDS + KIND]!;
        const flags = (kind >>> FLAGS_SHIFT) & 0xf;
        data[row * ROW_WORDS + KIND] = grammarId(kind & 0xffff, ownTypes, types) | (flags << FLAGS_SHIFT) | (grammarId(kind >>> FIELD_SHIFT, ownFields, fields) << FIELD_SHIFT);
      }
    }
    // A statement's field is its root's (given children's fields lie in the root's placement).
    const field = statementFields[i] ?? null;
    const word = next * ROW_WORDS + KIND;
    data[word] = (data[word]! & ~(0xfff << FIELD_SHIFT)) | ((field === null ? 0 : Math.max(0, fields.indexOf(field))) << FIELD_SHIFT);
    placed.set([next, place.index, place.row, next - first], i * FLAT_STATEMENT_WORDS);
    next += end - first;
    i++;
    return true;
  };
  return { tree: { data, statements: placed, types, fields }, next: copyStatement };
}

/** The grammar's id of a name that has `id` in `own` (the same id where `own` is the grammar's table). */
function grammarId<T>(id: number, own: readonly T[], grammar: readonly T[]): number {
  if (own === grammar || id === ERROR_TYPE_ID) return id;
  return Math.max(0, grammar.indexOf(own[id]!));
}

/** The copy a FlatTree holds (flattenTree), reading `source`: the statements placed on their own, as copyTree does. */
export function unflattenTree({ data, statements, types, fields }: FlatTree, source: string | SourceText): SyntaxNode {
  const ref = typeof source === 'string' ? new SourceText(source) : source;
  const rows = data.length / ROW_WORDS;
  const table = new NodeTable(data, types, fields, nextId);
  nextId += rows;
  const placed = (row: number, index: number, startRow: number): Placement => {
    const place = new Placement(ref, index, startRow);
    place.first = row;
    place.table = table;
    place.owner = new SyntaxNode(place, row);
    return place;
  };
  const root = placed(0, 0, 0).owner!;
  const places: Placement[] = [];
  for (let k = 0; k < statements.length; k += FLAT_STATEMENT_WORDS) {
    const [first, index, startRow, moved] = [statements[k]!, statements[k + 1]!, statements[k + 2]!, statements[k + 3]!];
    const end = data[first * ROW_WORDS + SUBTREE_END]! + moved;
    // The rows moved by `moved` from their own table's: their parent and subtree-end rows move with them.
    for (let row = first; row < end; row++) {
      data[row * ROW_WORDS + PARENT] = row === first ? 0 : data[row * ROW_WORDS + PARENT]! + moved;
      data[row * ROW_WORDS + SUBTREE_END] = data[row * ROW_WORDS + SUBTREE_END]! + moved;
    }
    places.push(placed(first, index, startRow));
  }
  root.children = places.map((place) => place.owner!);
  root.childFields = fieldNamesOf(fields, places.map((place) => data[place.first * ROW_WORDS + KIND]! >>> FIELD_SHIFT));
  for (const place of places) place.ownerParent = root;
  return root;
}
