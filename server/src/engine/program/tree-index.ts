// The nodes of a tree that the program model and the estimator each look for everywhere (every function, every
// call, every assignment): found in one walk of the tree and kept per tree, instead of one walk per question. The
// walk also measures the range of the tree's node ids, so that values per node can be kept in arrays (NodeValues).
import type { PyNode } from './node';

export interface TreeIndex {
  /** Every function definition, nested ones included, in document order. */
  readonly functions: readonly PyNode[];
  /** Every call expression, in document order. */
  readonly calls: readonly PyNode[];
  /** Every assignment, in document order. */
  readonly assignments: readonly PyNode[];
  /** Every class definition, `for` loop and `with` statement, in document order. */
  readonly classes: readonly PyNode[];
  readonly forLoops: readonly PyNode[];
  readonly withStatements: readonly PyNode[];
  /** The smallest and largest node id in the tree (the root included), and how many nodes it has. */
  readonly minId: number;
  readonly maxId: number;
  readonly nodeCount: number;
}

const indexes = new WeakMap<PyNode, TreeIndex>();

/** The index of the tree under `root` (a tree's root; a copy is never changed once made, so it is kept). */
export function treeIndex(root: PyNode): TreeIndex {
  let index = indexes.get(root);
  if (!index) {
    const functions: PyNode[] = [];
    const calls: PyNode[] = [];
    const assignments: PyNode[] = [];
    const classes: PyNode[] = [];
    const forLoops: PyNode[] = [];
    const withStatements: PyNode[] = [];
    let minId = root.id;
    let maxId = root.id;
    let nodeCount = 1;
    // Document order (as descendantsOfType gives it): children pushed last to first.
    const stack: Array<PyNode | null> = [];
    for (let i = root.children.length - 1; i >= 0; i--) stack.push(root.children[i] ?? null);
    while (stack.length > 0) {
      const node = stack.pop();
      if (!node) continue;
      nodeCount++;
      if (node.id < minId) minId = node.id;
      if (node.id > maxId) maxId = node.id;
      const type = node.type;
      if (type === 'call') calls.push(node);
      else if (type === 'assignment') assignments.push(node);
      else if (type === 'function_definition') functions.push(node);
      else if (type === 'for_statement') forLoops.push(node);
      else if (type === 'with_statement') withStatements.push(node);
      else if (type === 'class_definition') classes.push(node);
      const children = node.children;
      for (let i = children.length - 1; i >= 0; i--) stack.push(children[i] ?? null);
    }
    index = { functions, calls, assignments, classes, forLoops, withStatements, minId, maxId, nodeCount };
    indexes.set(root, index);
  }
  return index;
}

const CHUNK_BITS = 12;
const CHUNK_SIZE = 1 << CHUNK_BITS;

/**
 * A value per node id. The engine's tree copies number their nodes consecutively, so a tree's ids mostly fill a
 * range: there, values are kept in arrays by id (a Map of ten thousand entries, grown and rehashed entry by entry,
 * was a fifth of the program model's time); ids outside it, or a tree whose ids are spread out (tree-sitter's own
 * nodes, whose ids are addresses), use a Map.
 */
export class NodeValues<V extends object> {
  private readonly base: number;
  /** Ids from `base` up to `base + limit` are kept in chunks of CHUNK_SIZE, made when first written. */
  private readonly limit: number;
  private readonly chunks: Array<Array<V | undefined> | undefined>;
  private readonly others = new Map<number, V>();

  constructor(index: TreeIndex) {
    const range = index.maxId - index.minId + 1;
    // Dense enough (at least a quarter of the range is the tree's own nodes): arrays; else the Map alone.
    const dense = Number.isSafeInteger(range) && range <= 4 * index.nodeCount + CHUNK_SIZE;
    const chunkCount = dense ? Math.ceil(range / CHUNK_SIZE) : 0;
    this.base = index.minId;
    this.limit = chunkCount * CHUNK_SIZE;
    this.chunks = new Array<Array<V | undefined> | undefined>(chunkCount);
  }

  get(id: number): V | undefined {
    const offset = id - this.base;
    if (offset >= 0 && offset < this.limit) return this.chunks[offset >> CHUNK_BITS]?.[offset & (CHUNK_SIZE - 1)];
    return this.others.get(id);
  }

  has(id: number): boolean {
    return this.get(id) !== undefined;
  }

  set(id: number, value: V): void {
    const offset = id - this.base;
    if (offset >= 0 && offset < this.limit) {
      const slot = offset >> CHUNK_BITS;
      let chunk = this.chunks[slot];
      if (!chunk) this.chunks[slot] = chunk = new Array<V | undefined>(CHUNK_SIZE);
      chunk[offset & (CHUNK_SIZE - 1)] = value;
      return;
    }
    this.others.set(id, value);
  }
}
