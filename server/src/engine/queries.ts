// Tree-sitter queries are data: one .scm file per rule that a pattern serves (server/src/rules/queries/, copied
// to dist/queries/ by the build). Each is compiled once per process; matches are returned as the nodes of the
// semantic model's copy of the tree, so rules reason about them like any other node.
import type { Node as TreeSitterNode, Query, Tree } from 'web-tree-sitter';
import { compileQuerySync } from './parser';
import { host } from '../host';
import type { SyntaxNode } from './syntax-tree';

const compiled = new Map<string, Query>();

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

function query(name: string): Query {
  let result = compiled.get(name);
  if (!result) {
    result = compileQuerySync(querySource(name));
    compiled.set(name, result);
  }
  return result;
}

/** The node of `root`'s copy with exactly this range and type. */
function copyOf(root: SyntaxNode, startIndex: number, endIndex: number, type: string): SyntaxNode | undefined {
  let current: SyntaxNode | undefined = root;
  while (current) {
    if (current.startIndex === startIndex && current.endIndex === endIndex && current.type === type) return current;
    const children: readonly SyntaxNode[] = current.children;
    // The last child that starts at or before the range, then back over siblings that start at the same place.
    let low = 0;
    let high = children.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (children[mid]!.startIndex <= startIndex) low = mid + 1;
      else high = mid;
    }
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
  let byName = region && statementMatches.get(region);
  const cached = byName?.get(name);
  if (cached) return cached;
  const tree = treeOf();
  if (!tree) throw new Error('this model was built without its tree-sitter tree');
  if (!region) return capturesOf(query(name).matches(tree.rootNode), root);
  // The statement's own tree-sitter node, not a range over the root: in a tree with a syntax error elsewhere,
  // tree-sitter's range-limited matching misses matches that the statement holds.
  const index = childIndex(root, region);
  const node = index === undefined ? undefined : tree.rootNode.child(index);
  const result = node && node.startIndex === region.startIndex && node.endIndex === region.endIndex
    ? capturesOf(query(name).matches(node), root)
    : capturesOf(query(name).matches(tree.rootNode, { startIndex: region.startIndex, endIndex: region.endIndex }), root);
  if (!byName) statementMatches.set(region, (byName = new Map()));
  byName.set(name, result);
  return result;
}

const statementMatches = new WeakMap<SyntaxNode, Map<string, QueryCaptures[]>>();
let shippedQueryNames: string[] | undefined;

/**
 * Keeps the matches of every query within a top-level statement that was parsed alone (engine/statement-reparse.ts):
 * `node` is its tree-sitter node in that parse, `offset` where that parse's text lies in the document. The
 * document's own tree is then behind its text, and the statement's matches are read from here instead.
 */
export function rememberStatementMatches(statement: SyntaxNode, node: TreeSitterNode, offset: number): void {
  const byName = new Map<string, QueryCaptures[]>();
  // The files that ship do not change while the server runs (a host may read a folder to list them).
  shippedQueryNames ??= queryNames();
  for (const name of shippedQueryNames) byName.set(name, capturesOf(query(name).matches(node), statement, offset));
  statementMatches.set(statement, byName);
}

/** The index of a top-level statement among the root's children, by binary search on its start. */
function childIndex(root: SyntaxNode, statement: SyntaxNode): number | undefined {
  const children = root.children;
  let low = 0;
  let high = children.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (children[mid]!.startIndex < statement.startIndex) low = mid + 1;
    else high = mid;
  }
  // Zero-width children can share a start: look at each child that starts there.
  for (let i = low; i < children.length && children[i]!.startIndex === statement.startIndex; i++) if (children[i] === statement) return i;
  return undefined;
}

/** The captures as nodes of `root`'s copy; `offset` is added to the matched tree's offsets (a statement parsed alone). */
function capturesOf(matches: ReturnType<Query['matches']>, root: SyntaxNode, offset = 0): QueryCaptures[] {
  const result: QueryCaptures[] = [];
  for (const match of matches) {
    const captures: QueryCaptures = new Map();
    for (const capture of match.captures) {
      const node = copyOf(root, capture.node.startIndex + offset, capture.node.endIndex + offset, capture.node.type);
      if (node) captures.set(capture.name, node);
    }
    result.push(captures);
  }
  return result;
}
