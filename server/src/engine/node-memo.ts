// Values computed once per syntax node (a statement's node lists, a call's callee shape, …), kept on the placement
// of the node's statement (syntax-tree.ts) rather than in a module-level WeakMap. V8's scavenger keeps the value of a
// WeakMap entry alive while its key is in the young generation, and a value that reaches its key (a statement's node
// lists reach the statement through `parent`) keeps the key alive too: every tree an analysis had read survived the
// collections that came after it and was promoted (`oomguard check` of 200 scripts: 134 MB promoted, a quarter of
// the run in scavenges). On the placement, a memo lives and dies with the nodes it describes, as an entry of a
// WeakMap did, and a tree that is no longer read is garbage for the next scavenge.
import type { SyntaxNode } from './syntax-tree';

/** How many memos exist: each owns two slots of a placement's memos (the statement's own value, the other nodes'). */
let memoCount = 0;

/** Stands for a memo whose value is `undefined` (has() tells it from a missing one). */
const UNDEFINED_VALUE = Symbol('undefined');

/** A WeakMap from syntax nodes to values, kept on the nodes' statements (see the comment above). */
export class NodeMemo<V> {
  private readonly slot = 2 * memoCount++;

  get(node: SyntaxNode): V | undefined {
    const value = this.stored(node);
    return value === UNDEFINED_VALUE ? undefined : (value as V | undefined);
  }

  has(node: SyntaxNode): boolean {
    return this.stored(node) !== undefined;
  }

  set(node: SyntaxNode, value: V): this {
    const placement = node.placement;
    const memos = (placement.memos ??= []);
    const stored = value === undefined ? UNDEFINED_VALUE : value;
    // The statement itself (most memos are per statement) has a slot of its own; its other nodes share a map.
    if (placement.owner === node) {
      memos[this.slot] = stored;
    } else {
      let byNode = memos[this.slot + 1] as Map<SyntaxNode, unknown> | undefined;
      if (!byNode) memos[this.slot + 1] = byNode = new Map();
      byNode.set(node, stored);
    }
    return this;
  }

  private stored(node: SyntaxNode): unknown {
    const placement = node.placement;
    const memos = placement.memos;
    if (!memos) return undefined;
    if (placement.owner === node) return memos[this.slot];
    return (memos[this.slot + 1] as Map<SyntaxNode, unknown> | undefined)?.get(node);
  }
}
