// Tree-sitter queries are data: one .scm file per rule that a pattern serves (server/src/rules/queries/, copied
// to dist/queries/ by the build). Each is compiled once per process; matches are returned as the nodes of the
// semantic model's copy of the tree, so rules reason about them like any other node.
import type { Query, Tree } from 'web-tree-sitter';
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
    const children: SyntaxNode[] = current.children;
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
 * The matches of query `name` over `tree` (the tree-sitter tree `root` was copied from), within `region` when
 * given, each as its captures by name.
 */
export function queryMatches(tree: Tree, root: SyntaxNode, name: string, region?: SyntaxNode): QueryCaptures[] {
  const range = region ? { startIndex: region.startIndex, endIndex: region.endIndex } : {};
  const result: QueryCaptures[] = [];
  for (const match of query(name).matches(tree.rootNode, range)) {
    const captures: QueryCaptures = new Map();
    for (const capture of match.captures) {
      const node = copyOf(root, capture.node.startIndex, capture.node.endIndex, capture.node.type);
      if (node) captures.set(capture.name, node);
    }
    result.push(captures);
  }
  return result;
}
