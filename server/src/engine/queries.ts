// Tree-sitter queries are data: one .scm file per rule that a pattern serves (server/src/rules/queries/, copied
// to dist/queries/ by the build). They are compiled once per process, as one query; matches are returned as the nodes of the
// semantic model's copy of the tree, so rules reason about them like any other node.
import type { Node as TreeSitterNode, Query, QueryMatch, Tree } from 'web-tree-sitter';
import { compileQuerySync, loadedParser } from './parser';
import { host } from '../host';
import type { SyntaxNode } from './syntax-tree';
import { lowerBound } from './syntax';
import { parseableText } from './lines';
import { NodeMemo } from './node-memo';


/** The source of a query file by name (`retain-graph-in-loop`). */
export function querySource(name: string): string {
  const source = host().querySource(name);
  if (source === undefined) throw new Error(`query ${name}.scm does not ship`);
  return source;
}

/** Every query file that ships, by name. */
export function queryNames(): string[] {
  return host().queryNames();
}

/**
 * The words each query file says its patterns need (a `; needs:` line: a file that spells none of them has no match
 * of that query), or undefined for a file without the line. Read once per process.
 */
let neededWords: ReadonlyArray<readonly string[] | undefined> | undefined;

/** The words of a query source's `; needs:` line, if it has one. */
export function queryNeeds(source: string): string[] | undefined {
  const line = /^;\s*needs:(.*)$/m.exec(source);
  return line ? line[1]!.trim().split(/\s+/).filter(Boolean) : undefined;
}

/**
 * Whether a query may match in `text`: some query file's needed word is in it (or a file says none). A document that
 * no query can match may be parsed in parts (parse-in-parts.ts), its whole tree-sitter tree never made; one that a
 * query may match keeps it, for the whole-file query its first analysis asks.
 */
export function queriesMayMatch(text: string): boolean {
  neededWords ??= queryNames().map((name) => queryNeeds(querySource(name)));
  return neededWords.some((words) => !words || words.some((word) => text.includes(word)));
}

/**
 * Every shipped query compiled as one, and which of its patterns each file's are: one pass over a tree (or a
 * statement) answers all of them, where one pass per file walked it once per rule.
 */
interface CombinedQuery {
  query: Query;
  /** The query file of each pattern, by pattern index. */
  nameOfPattern: string[];
  names: string[];
}

let combined: CombinedQuery | undefined;

function combinedQuery(): CombinedQuery {
  if (combined) return combined;
  // The files that ship do not change while the server runs (a host may read a folder to list them).
  const names = queryNames();
  let source = '';
  // Where each file's text starts, in UTF-8 bytes as startIndexForPattern counts.
  const fileStarts: number[] = [];
  let bytes = 0;
  const encoder = new TextEncoder();
  for (const name of names) {
    const text = querySource(name) + '\n';
    fileStarts.push(bytes);
    bytes += encoder.encode(text).length;
    source += text;
  }
  const query = compileQuerySync(source);
  // Each pattern belongs to the file whose text holds its start.
  const nameOfPattern: string[] = [];
  for (let pattern = 0, file = 0; pattern < query.patternCount(); pattern++) {
    const start = query.startIndexForPattern(pattern);
    while (file + 1 < fileStarts.length && fileStarts[file + 1]! <= start) file++;
    nameOfPattern.push(names[file]!);
  }
  combined = { query, nameOfPattern, names };
  return combined;
}

/** The matches of every shipped query within `node`, as captures on `root`'s copy, by query name. */
function allMatches(node: TreeSitterNode, root: SyntaxNode, offset = 0, range?: { startIndex: number; endIndex: number }): Map<string, QueryCaptures[]> {
  const { query, nameOfPattern, names } = combinedQuery();
  const byName = new Map<string, QueryCaptures[]>(names.map((name) => [name, []]));
  for (const match of query.matches(node, range)) byName.get(nameOfPattern[match.patternIndex]!)!.push(capturesOf(match, root, offset));
  return byName;
}

/** The node of `root`'s copy with exactly this range and type. */
function copyOf(root: SyntaxNode, startIndex: number, endIndex: number, type: string): SyntaxNode | undefined {
  let current: SyntaxNode | undefined = root;
  while (current) {
    if (current.startIndex === startIndex && current.endIndex === endIndex && current.type === type) return current;
    const children: readonly SyntaxNode[] = current.children;
    // The last child that starts at or before the range, then back over siblings that start at the same place.
    const low = lowerBound(children, startIndex + 1);
    let next: SyntaxNode | undefined;
    for (let i = low - 1; i >= 0; i--) {
      const child = children[i]!;
      if (child.startIndex <= startIndex && endIndex <= child.endIndex) {
        next = child;
        break;
      }
      if (child.startIndex < startIndex) break;
    }
    current = next;
  }
  return undefined;
}

export type QueryCaptures = Map<string, SyntaxNode>;

/**
 * The matches of query `name` over `tree` (the tree-sitter tree `root` was copied from), within `region` (a
 * top-level statement of `root`) when given, each as its captures by name.
 */
export function queryMatches(treeOf: () => Tree | undefined, root: SyntaxNode, name: string, region?: SyntaxNode): QueryCaptures[] {
  // A statement moved unchanged into a new version keeps its copy's nodes, and so its matches; the tree is asked
  // for only when they are not known (it may have to be re-parsed first, see DocumentStore.currentTree).
  const known = (region ? statementMatches : fileMatches).get(region ?? root) ?? (region ? undefined : matchesOfStatements(root));
  if (known) return known.get(name) ?? [];
  const alone = region && parsedAlone.has(region) ? matchesParsingAlone(root, region) : undefined;
  if (alone) {
    statementMatches.set(region!, alone);
    return alone.get(name) ?? [];
  }
  const tree = treeOf();
  if (!tree) throw new Error('this model was built without its tree-sitter tree');
  if (!region) {
    const byName = allMatches(tree.rootNode, root);
    fileMatches.set(root, byName);
    // Each statement keeps its part: the tree can then go (DocumentStore.releaseUneditedTree) without a second query.
    if (!root.hasError) rememberByStatement(root, byName);
    return byName.get(name) ?? [];
  }
  // The statement's own tree-sitter node, not a range over the root: in a tree with a syntax error elsewhere,
  // tree-sitter's range-limited matching misses matches that the statement holds.
  const index = childIndex(root, region);
  const node = index === undefined ? undefined : tree.rootNode.child(index);
  const byName = node && node.startIndex === region.startIndex && node.endIndex === region.endIndex
    ? allMatches(node, root)
    : allMatches(tree.rootNode, root, 0, { startIndex: region.startIndex, endIndex: region.endIndex });
  statementMatches.set(region, byName);
  return byName.get(name) ?? [];
}

/** The matches of every query within a top-level statement, and within a whole tree (by its copy's root). */
const statementMatches = new NodeMemo<ReadonlyMap<string, QueryCaptures[]>>();
const fileMatches = new NodeMemo<ReadonlyMap<string, QueryCaptures[]>>();

/**
 * Top-level statements parsed alone (engine/statement-reparse.ts), whose document's tree may be behind their text:
 * their matches are read from parsing them alone again, when a rule first asks (most files spell none of the
 * words the queries look for, and then their rules never ask, nor is the query compiled).
 */
const parsedAlone = new WeakSet<SyntaxNode>();

/** Marks a top-level statement of the copy as one parsed alone (see parsedAlone). */
export function rememberParsedAlone(statement: SyntaxNode): void {
  parsedAlone.add(statement);
}

/**
 * The matches within a statement parsed alone, parsed alone again (its text up to the next statement, as
 * statement-reparse.ts parsed it); undefined where that no longer gives the statement: the document's tree answers.
 */
function matchesParsingAlone(root: SyntaxNode, statement: SyntaxNode): Map<string, QueryCaptures[]> | undefined {
  const parser = loadedParser();
  const index = childIndex(root, statement);
  if (!parser || index === undefined) return undefined;
  const end = root.children[index + 1]?.startIndex ?? statement.content.length;
  const tree = parser.parse(parseableText(statement.content.slice(statement.startIndex, end)));
  try {
    const module = tree?.rootNode;
    const node = module?.child(0);
    if (!module || module.hasError || module.childCount !== 1 || !node || node.endIndex !== statement.endIndex - statement.startIndex || node.type !== statement.type) return undefined;
    return allMatches(node, statement, statement.startIndex);
  } finally {
    tree?.delete();
  }
}

/**
 * The matches of an error-free file, when each of its top-level statements' are known: theirs one after another, as
 * a query over the whole tree gives them (no pattern reaches above a statement, and a statement's matches end before
 * the next statement starts). A file with an error is queried whole: its statements' matches may come from queries
 * limited to a range, which can miss what a whole query finds (see queryMatches).
 */
function matchesOfStatements(root: SyntaxNode): Map<string, QueryCaptures[]> | undefined {
  if (root.hasError) return undefined;
  const combined = new Map<string, QueryCaptures[]>();
  for (const statement of root.children) {
    const known = statementMatches.get(statement);
    if (!known) return undefined;
    for (const [name, matches] of known) {
      let all = combined.get(name);
      if (!all) combined.set(name, (all = []));
      for (const match of matches) all.push(match);
    }
  }
  fileMatches.set(root, combined);
  return combined;
}

/** A statement without any match (most of them): one map for all. */
const NO_MATCHES: ReadonlyMap<string, QueryCaptures[]> = new Map();

/**
 * Readies an error-free copy to answer queries over its top-level statements once its tree-sitter tree is gone (a
 * document not being edited lets it go: DocumentStore.releaseUneditedTree): from the matches a whole-file query
 * left per statement, else by parsing a statement alone when a rule first asks for its matches (as for a statement
 * the edit path parsed alone). A whole-file query then re-parses the file, unless every statement's are known.
 */
export function answerQueriesWithoutTree(root: SyntaxNode): void {
  if (root.hasError) return;
  for (const statement of root.children) if (!statementMatches.has(statement)) parsedAlone.add(statement);
}

/** Splits the matches of a whole error-free file among its top-level statements, as a query over each would give them. */
function rememberByStatement(root: SyntaxNode, byName: ReadonlyMap<string, QueryCaptures[]>): void {
  const children = root.children;
  const byStatement = new Map<SyntaxNode, Map<string, QueryCaptures[]>>();
  for (const [name, matches] of byName) {
    for (const match of matches) {
      // The top-level statement holding the match's captures; a match without any is not split (none are).
      let node: SyntaxNode | null | undefined = match.values().next().value;
      while (node && node.parent !== root) node = node.parent;
      if (!node) return;
      let own = byStatement.get(node);
      if (!own) byStatement.set(node, (own = new Map()));
      let list = own.get(name);
      if (!list) own.set(name, (list = []));
      list.push(match);
    }
  }
  for (const statement of children) statementMatches.set(statement, byStatement.get(statement) ?? NO_MATCHES);
}

/** The index of a top-level statement among the root's children, by binary search on its start. */
function childIndex(root: SyntaxNode, statement: SyntaxNode): number | undefined {
  const children = root.children;
  const low = lowerBound(children, statement.startIndex);
  // Zero-width children can share a start: look at each child that starts there.
  for (let i = low; i < children.length && children[i]!.startIndex === statement.startIndex; i++) if (children[i] === statement) return i;
  return undefined;
}

/** A match's captures as nodes of `root`'s copy; `offset` is added to the matched tree's offsets (a statement parsed alone). */
function capturesOf(match: QueryMatch, root: SyntaxNode, offset: number): QueryCaptures {
  const captures: QueryCaptures = new Map();
  for (const capture of match.captures) {
    const node = copyOf(root, capture.node.startIndex + offset, capture.node.endIndex + offset, capture.node.type);
    if (node) captures.set(capture.name, node);
  }
  return captures;
}
