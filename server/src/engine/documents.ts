// One syntax tree and one semantic model per document version. Edits are applied to the previous tree with
// tree.edit() and re-parsed incrementally, so a keystroke in a 5,000-line script re-parses only what changed.
import type { Edit, Tree } from './parser';
import { loadedParser, parsePython, pythonParser } from './parser';
import { copyParsedInParts } from './parse-in-parts';
import { parseableText } from './lines';
import { computeLineStarts, lineIndexAt } from './lines';
import { MAX_ANALYZED_CHARACTERS } from './limits';
import { IndentCounts } from '../fixes/edits';

export { computeLineStarts };
import { recoverTree } from './recovery';
import { copyTree, copyTreeIncremental, SourceText } from './syntax-tree';
import { PieceText } from './piece-text';
import { answerQueriesWithoutTree, queriesMayMatch } from './queries';
import { copyTreeReparsingStatement } from './statement-reparse';
import type { SingleEdit, SyntaxNode } from './syntax-tree';
import { SemanticModel, STATEMENT_NODES_COLLECTOR } from './semantic/model';
import type { Position } from './types';

export interface TextChange {
  /** Absent for a full-text replacement. */
  range?: { start: Position; end: Position };
  text: string;
}

/** One version of an open document: its text, the trees and copy made of it, and the semantic model read from them. */
export class DocumentState {
  /**
   * The text (piece-text.ts): an edit makes the next version's from the last one's without copying it whole, and
   * `text` makes the whole string only when something reads it.
   */
  content: PieceText;
  /**
   * The tree of the text, kept for incremental re-parsing (edited but not re-parsed while `treeBehind`); none for a
   * document not edited since it was opened once that lets its tree go (releaseUneditedTree).
   */
  tree: Tree | undefined;
  /**
   * The copy is ahead of `tree`: the last edits were parsed statement by statement (statement-reparse.ts) and `tree`
   * has them as tree.edit()s only, or the tree was let go (letGoOfTree). currentTree() parses when something needs
   * it. The copy is then of an error-free parse, with no recovery.
   */
  treeBehind = false;
  /** Whether a change has been applied since the document was opened (from the start of its application). */
  edited = false;
  /** The tree the rules read: `tree`, or a recovered parse when an error swallowed many lines. */
  analysisTree: Tree | undefined;
  /** The text `analysisTree` was parsed from where it is a recovered parse (error lines blanked); else undefined. */
  recoveredText: string | undefined;
  model: SemanticModel | undefined;
  /** The previous version's model, while this version's is not built: it lends what the edit left unchanged. */
  previousModel: SemanticModel | undefined;
  /** The plain copy of `analysisTree` the model reads; unchanged statements move from version to version. */
  syntaxRoot: SyntaxNode | undefined;
  /** What each line of the text says about its indentation unit, kept up to date edit by edit (indentUnitOf). */
  indentCounts: IndentCounts;
  /** The text holder shared by the nodes of `syntaxRoot` (and by statements moved on from earlier versions). */
  source: SourceText;

  constructor(
    readonly uri: string,
    public version: number,
    text: string,
    /** Where each line of the text starts (UTF-16 offsets), kept up to date edit by edit. */
    public lineStarts: number[],
  ) {
    this.content = PieceText.of(text);
    this.indentCounts = countedIndents(text, lineStarts);
    this.source = new SourceText(this.content, lineStarts);
  }

  /** The whole text (made from the pieces of the last edits if it is not yet: see `content`). */
  get text(): string {
    return this.content.text;
  }

  /** The text `analysisTree` was parsed from: the document's, or a recovered copy of it. */
  get analysisText(): string {
    return this.recoveredText ?? this.content.text;
  }
}

/** UTF-16 offset of a line/character position (LSP positions count UTF-16 code units, as JS strings do). */
export function offsetAt(text: { readonly length: number }, lineStarts: readonly number[], position: Position): number {
  const lineStart = lineStarts[position.line];
  if (lineStart === undefined) return text.length;
  const nextLineStart = lineStarts[position.line + 1] ?? text.length;
  return Math.min(lineStart + position.character, nextLineStart);
}

function positionAt(lineStarts: number[], offset: number): Position {
  const line = lineIndexAt(lineStarts, offset);
  return { line, character: offset - lineStarts[line]! };
}

/** Where inserted text ends, given where it starts. */
function endOfInsertion(start: Position, inserted: string): Position {
  const lines = inserted.split(/\r\n|\r|\n/);
  return lines.length === 1
    ? { line: start.line, character: start.character + inserted.length }
    : { line: start.line + lines.length - 1, character: lines[lines.length - 1]!.length };
}

/**
 * The line starts after replacing [start, oldEnd) of `text` by `inserted`, from the old ones (no rescan of the
 * file). Undefined where a carriage return is near the edit (a split or joined CRLF): the caller rescans. `spare` is
 * an array that nothing reads any more (the version before the last one's): the new starts are written into it, where
 * a new array of 20,000 line starts is a new large object (over a millisecond here, most of it fresh pages).
 */
function spliceLineStarts(lineStarts: number[], text: PieceText, start: number, oldEnd: number, startLine: number, oldEndLine: number, inserted: string, spare?: number[]): number[] | undefined {
  if (inserted.includes('\r') || text.charCodeAt(start - 1) === 13 || text.charCodeAt(oldEnd - 1) === 13 || text.slice(start, oldEnd).includes('\r')) return undefined;
  const delta = inserted.length - (oldEnd - start);
  const insertedStarts: number[] = [];
  for (let i = inserted.indexOf('\n'); i >= 0; i = inserted.indexOf('\n', i + 1)) insertedStarts.push(start + i + 1);
  const removedLines = oldEndLine - startLine;
  // No line start moves: the same array (the arrays are never changed while a version reads them).
  if (removedLines === 0 && insertedStarts.length === 0 && delta === 0) return lineStarts;
  if (spare && spare !== lineStarts) {
    let length = 0;
    const put = (lineStart: number) => {
      if (length < spare.length) spare[length] = lineStart;
      else spare.push(lineStart);
      length++;
    };
    for (let line = 0; line <= startLine; line++) put(lineStarts[line]!);
    for (const lineStart of insertedStarts) put(lineStart);
    for (let line = oldEndLine + 1; line < lineStarts.length; line++) put(lineStarts[line]! + delta);
    spare.length = length;
    return spare;
  }
  if (insertedStarts.length !== removedLines) {
    const result = lineStarts.slice(0, startLine + 1);
    for (const lineStart of insertedStarts) result.push(lineStart);
    for (let line = oldEndLine + 1; line < lineStarts.length; line++) result.push(lineStarts[line]! + delta);
    return result;
  }
  // As many lines as before (most keystrokes): the array is copied whole and shifted in place, several times faster
  // than a push per line.
  const result = lineStarts.slice();
  for (let i = 0; i < removedLines; i++) result[startLine + 1 + i] = insertedStarts[i]!;
  for (let line = oldEndLine + 1; line < result.length; line++) result[line]! += delta;
  return result;
}

function toPoint(position: Position) {
  return { row: position.line, column: position.character };
}

/**
 * How many documents not edited since they were opened keep their tree-sitter tree at once. The parser's
 * WebAssembly memory never shrinks, so it keeps the size of the most trees ever held together: with one, ten
 * documents opened at once need room for two trees (the newest is parsed before the one before it lets go).
 */
const UNEDITED_TREES_KEPT = 1;

export class DocumentStore {
  private readonly documents = new Map<string, DocumentState>();
  /**
   * Per document, the line starts of the version before the current one, where nothing reads them any more (the
   * document's holder moved on to the current ones): the next edit that moves line starts writes them there.
   */
  private readonly spareLineStarts = new WeakMap<DocumentState, number[]>();

  get(uri: string): DocumentState | undefined {
    return this.documents.get(uri);
  }

  async open(uri: string, version: number, text: string): Promise<DocumentState> {
    const state = new DocumentState(uri, version, text, computeLineStarts(text));
    // Over the limit, nothing is parsed (the user gets a message instead of findings).
    if (text.length > MAX_ANALYZED_CHARACTERS) return this.added(state);
    await pythonParser();
    // A long text that no query can match is parsed in parts: its copy is all the analysis reads, and its whole tree
    // is parsed only if something needs it (an edit that spans statements, see currentTree).
    const parts = queriesMayMatch(text) ? undefined : copyParsedInParts(text, state.source, state.lineStarts, STATEMENT_NODES_COLLECTOR);
    if (parts) {
      Object.assign(state, { syntaxRoot: parts, treeBehind: true });
      answerQueriesWithoutTree(parts);
      return this.added(state);
    }
    const tree = await parsePython(text);
    const recovered = tree && (await recoverTree(text, tree));
    state.tree = tree;
    state.analysisTree = recovered?.tree;
    state.recoveredText = recovered && recovered.tree !== tree ? recovered.text : undefined;
    return this.added(state);
  }

  /** Adds an opened document. */
  private added(state: DocumentState): DocumentState {
    // Most open documents are read, not edited: a tree kept for incremental parsing holds 2.4 MB of the parser's
    // memory per 2,000 lines (memory it never gives back to the system). This one keeps its tree for its first edit
    // until it has been idle a while (releaseUneditedTree); older unedited documents let theirs go now.
    this.documents.delete(state.uri);
    this.documents.set(state.uri, state);
    this.releaseOlderUneditedTrees();
    return state;
  }

  /**
   * Lets go of the trees of documents not edited since they were opened, but for the newest (UNEDITED_TREES_KEPT):
   * when a document opens, and after an analysis that had to parse a document whose tree was let go again (a
   * whole-file query, see answerQueriesWithoutTree).
   */
  releaseOlderUneditedTrees(): void {
    const unedited = [...this.documents.values()].filter((state) => !state.edited && state.tree && !state.treeBehind);
    for (const state of unedited.slice(0, Math.max(0, unedited.length - UNEDITED_TREES_KEPT))) this.releaseUneditedTree(state);
  }

  /**
   * Lets go of the tree-sitter tree of a document not edited since it was opened, once its copy is made (the first
   * analysis makes it): the copy is all the analysis reads; a query over a statement reads the matches the whole-file
   * query left, or parses the statement alone (answerQueriesWithoutTree), and the next edit parses the statement it
   * falls in alone, or the whole text afresh (see treeBehind). Only an error-free, unrecovered tree goes. Whether it went.
   */
  releaseUneditedTree(state: DocumentState): boolean {
    const tree = state.tree;
    if (state.edited || !tree || state.treeBehind || state.analysisTree !== tree || tree.rootNode.hasError) return false;
    if (!state.syntaxRoot) {
      state.source = analysedSource(state);
      state.syntaxRoot = copyTree(tree, state.source, STATEMENT_NODES_COLLECTOR);
    }
    answerQueriesWithoutTree(state.syntaxRoot);
    tree.delete();
    Object.assign(state, { tree: undefined, analysisTree: undefined, treeBehind: true });
    return true;
  }

  /** Applies LSP content changes in order; the tree is edited alongside and re-parsed once at the end. */
  async change(uri: string, version: number, changes: readonly TextChange[]): Promise<DocumentState | undefined> {
    const state = this.documents.get(uri);
    if (!state) return undefined;
    // Before the first await: from here on, its tree is this change's (releaseUneditedTree leaves it).
    state.edited = true;
    let content = state.content;
    let tree = state.tree;
    const previousLineStarts = state.lineStarts;
    let lineStarts = previousLineStarts;
    let spare = changes.length === 1 ? this.spareLineStarts.get(state) : undefined;
    this.spareLineStarts.delete(state);
    let indentCounts = state.indentCounts;
    let lastEdit: SingleEdit | undefined;
    for (const change of changes) {
      if (!change.range) {
        content = PieceText.of(change.text);
        lineStarts = computeLineStarts(change.text);
        indentCounts = countedIndents(change.text, lineStarts);
        // The state's own tree is deleted once, below, with the other trees it no longer needs.
        if (tree !== state.tree) tree?.delete();
        tree = undefined;
        continue;
      }
      let startIndex = offsetAt(content, lineStarts, change.range.start);
      const oldEndIndex = offsetAt(content, lineStarts, change.range.end);
      let inserted = change.text;
      // A carriage return just before the edit may turn from a line ending of its own into half of a CRLF (or
      // back): the parser reads a lone one as a newline, so the edit takes it in and tree-sitter re-reads it.
      if (startIndex > 0 && content.charCodeAt(startIndex - 1) === 13) {
        startIndex--;
        inserted = '\r' + inserted;
      }
      const start = positionAt(lineStarts, startIndex);
      const oldEnd = positionAt(lineStarts, oldEndIndex);
      const newEndIndex = startIndex + inserted.length;
      const newEnd = endOfInsertion(start, inserted);
      const newContent = content.replaced(startIndex, oldEndIndex, inserted);
      tree?.edit({
        startIndex,
        oldEndIndex,
        newEndIndex,
        startPosition: toPoint(start),
        oldEndPosition: toPoint(oldEnd),
        newEndPosition: toPoint(newEnd),
      } satisfies Edit);
      lastEdit = changes.length === 1
        ? { startIndex, oldEndIndex, newEndIndex, startRow: start.line, oldEndRow: oldEnd.line, newEndRow: newEnd.line }
        : undefined;
      const spliced = spliceLineStarts(lineStarts, content, startIndex, oldEndIndex, start.line, oldEnd.line, inserted, spare);
      if (spliced === spare) spare = undefined;
      if (spliced) {
        // The lines the edit replaced leave the counts and the ones it wrote enter them; the others are the same lines.
        indentCounts.count(content, lineStarts, start.line, oldEnd.line, -1);
        indentCounts.count(newContent, spliced, start.line, newEnd.line, 1);
        lineStarts = spliced;
      } else {
        lineStarts = computeLineStarts(newContent.text);
        indentCounts = countedIndents(newContent.text, lineStarts);
      }
      content = newContent;
    }
    if (content.length > MAX_ANALYZED_CHARACTERS) {
      // Too large to analyse: keep the text (edits may bring it back under the limit), drop every tree.
      tree?.delete();
      if (state.tree && state.tree !== tree) state.tree.delete();
      releaseAnalysisTree(state);
      state.source = new SourceText(content);
      Object.assign(state, { version, content, lineStarts, indentCounts, tree: undefined, treeBehind: false, analysisTree: undefined, recoveredText: undefined, model: undefined, previousModel: undefined, syntaxRoot: undefined });
      return state;
    }
    const previous = tree;
    // The previous copy may lend statements only if it was a copy of the plain (unrecovered) tree.
    const previousWasPlain = state.treeBehind || (!!state.analysisTree && state.analysisTree === state.tree);
    // (The tree is the one edited above, or none: let go of, or replaced by a whole text.)
    if (previous === state.tree && previousWasPlain && state.syntaxRoot && lastEdit) {
      // One edit inside one statement: that statement alone is parsed; the tree keeps the edit for later.
      const syntaxRoot = copyTreeReparsingStatement(state.source, content, state.syntaxRoot, state.content.length, lastEdit, lineStarts);
      if (syntaxRoot) {
        this.keepSpareLineStarts(state, lineStarts, previousLineStarts, spare);
        Object.assign(state, { version, content, lineStarts, indentCounts, treeBehind: true, recoveredText: undefined, model: undefined, previousModel: state.model, syntaxRoot });
        return state;
      }
    }
    // The whole text is parsed: tree-sitter reads it as one string.
    const text = content.text;
    const parsed = await parsePython(text, previous);
    if (previous && previous !== parsed) previous.delete();
    if (state.tree && state.tree !== previous && state.tree !== parsed) state.tree.delete();
    releaseAnalysisTree(state);
    const recovered = parsed && (await recoverTree(text, parsed));
    // One edit and no recovery: the previous copy can lend its untouched statements to the new one.
    const previousRoot = state.syntaxRoot;
    const incremental = previousRoot && lastEdit && recovered && recovered.tree === parsed && previousWasPlain;
    let syntaxRoot: SyntaxNode | undefined;
    if (incremental) {
      syntaxRoot = copyTreeIncremental(parsed, state.source, content, previousRoot, lastEdit!, lineStarts);
      this.keepSpareLineStarts(state, lineStarts, previousLineStarts, spare);
    } else {
      // A fresh holder: the previous version's nodes keep reading their own text.
      state.source = new SourceText(content, lineStarts);
    }
    // A model derives from the previous one only where this copy moved the previous one's statements.
    Object.assign(state, { version, content, lineStarts, indentCounts, tree: parsed, treeBehind: false, analysisTree: recovered?.tree, recoveredText: recovered && recovered.tree !== parsed ? recovered.text : undefined, model: undefined, previousModel: incremental ? state.model : undefined, syntaxRoot });
    return state;
  }

  /**
   * After an edit whose copy the document's holder read on to (its nodes read `lineStarts` now): the line starts of the
   * version before, if they are not the current ones, are read by nothing and are kept for the next edit to write into.
   */
  private keepSpareLineStarts(state: DocumentState, lineStarts: number[], previous: number[], unused: number[] | undefined): void {
    const spare = previous !== lineStarts ? previous : unused;
    if (spare) this.spareLineStarts.set(state, spare);
  }

  close(uri: string): void {
    const state = this.documents.get(uri);
    if (state) releaseAnalysisTree(state);
    state?.tree?.delete();
    // A model of the closed document still held by a request must not re-parse a deleted tree (currentTree).
    if (state) Object.assign(state, { tree: undefined, treeBehind: false });
    this.documents.delete(uri);
  }

  /** indentUnit of the current text (fixes/edits.ts), from the counts kept edit by edit. */
  indentUnitOf(state: DocumentState): string {
    return state.indentCounts.unitOf(state.content);
  }

  /** The semantic model of the current version, built on first use and shared by every rule and request. */
  modelOf(state: DocumentState): SemanticModel | undefined {
    if (!state.model && (state.analysisTree || state.syntaxRoot)) {
      if (!state.syntaxRoot) {
        state.source = analysedSource(state);
        state.syntaxRoot = copyTree(state.analysisTree!, state.source, STATEMENT_NODES_COLLECTOR);
      }
      const version = state.version;
      // The tree-sitter tree is read only by queries over statements not parsed alone (a whole-file analysis).
      state.model = new SemanticModel(state.syntaxRoot, undefined, () => (state.version === version ? this.currentTree(state) : undefined), state.previousModel);
      state.previousModel = undefined;
    }
    return state.model;
  }

  /** The tree-sitter tree of the current version, re-parsed first if edits were parsed statement by statement. */
  currentTree(state: DocumentState): Tree | undefined {
    const parser = loadedParser();
    if (state.treeBehind && parser) {
      // Incremental when the tree has every edit since its last parse, else afresh. No recovery is needed: the
      // statements parsed alone had no error, and neither had the rest of the file.
      const parsed = parser.parse(parseableText(state.text), state.tree) ?? undefined;
      state.tree?.delete();
      state.tree = parsed;
      state.analysisTree = parsed;
      state.treeBehind = false;
    }
    return state.analysisTree;
  }
}

/**
 * A new holder of the analysed text for a copy of its tree: with the document's line starts where that text is the
 * document's (no recovery), which the copy would otherwise compute again.
 */
function analysedSource(state: DocumentState): SourceText {
  return state.recoveredText === undefined ? new SourceText(state.content, state.lineStarts) : new SourceText(state.recoveredText);
}

/** The indentation counts of every line of a text. */
function countedIndents(text: string, lineStarts: readonly number[]): IndentCounts {
  const counts = new IndentCounts();
  counts.count(text, lineStarts, 0, lineStarts.length - 1, 1);
  return counts;
}

function releaseAnalysisTree(state: DocumentState): void {
  if (state.analysisTree && state.analysisTree !== state.tree) state.analysisTree.delete();
  state.analysisTree = undefined;
}
