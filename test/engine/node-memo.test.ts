// What the analysis remembers of a tree's nodes (engine/node-memo.ts) dies with the tree. Kept in module-level
// WeakMaps, it kept every analysed tree alive through V8's young-generation collections (a WeakMap's value is kept
// while its key is young, and the values reach their keys): each tree was promoted to the old generation, and
// `oomguard check` over many files spent a quarter of its time copying trees that nothing used any more.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import { NodeMemo } from '../../server/src/engine/node-memo';
import { parsePython } from '../../server/src/engine/parser';
import { copyTree } from '../../server/src/engine/syntax-tree';
import type { SyntaxNode } from '../../server/src/engine/syntax-tree';
import { generateTrainingScript } from '../../scripts/bench/generate';

v8.setFlagsFromString('--expose-gc');
/** V8's `gc` (a new context has it once the flag is set); `minor` collects the young generation only. */
const collect = vm.runInNewContext('gc') as (options?: { type: 'major' | 'minor' }) => void;

/** The bytes the heap holds after a full collection, or after two young-generation ones (what survives them is promoted). */
function heapAfter(kind: 'major' | 'minor'): number {
  collect({ type: kind });
  if (kind === 'minor') collect({ type: 'minor' });
  return process.memoryUsage().heapUsed;
}

test('a tree whose memos reach it is freed by young-generation collections once nothing else holds it', async () => {
  const text = generateTrainingScript(200, 7);
  const tree = (await parsePython(text))!;
  // What the semantic model keeps per statement: its nodes of some kinds, each of which reaches the statement.
  const memo = new NodeMemo<SyntaxNode[]>();
  const copyWithMemos = () => {
    const root = copyTree(tree, text);
    for (const statement of root.children) memo.set(statement, statement.descendantsOfType(['call', 'identifier']));
    return root;
  };
  const emptyHeap = heapAfter('major');
  const kept = copyWithMemos();
  const inUse = heapAfter('major') - emptyHeap;
  assert.ok(kept.children.length > 0);

  // A scavenge that V8 starts in the middle of a copy (the copy allocates) sees part of it alive and ages it, so that
  // part can outlive the two collections that follow; the smallest of three tries is what the memos themselves keep
  // (through a WeakMap, every try kept the whole tree).
  let left = Infinity;
  for (let attempt = 0; attempt < 3 && !(left < inUse / 4); attempt++) {
    const before = heapAfter('minor');
    copyWithMemos();
    left = Math.min(left, heapAfter('minor') - before);
  }
  tree.delete();
  assert.ok(left < inUse / 4, `${(left / 1024).toFixed(0)} KiB left after two young-generation collections, of ${(inUse / 1024).toFixed(0)} KiB in use`);
});

test('a node memo keeps a value per node, the statement\'s own and its other nodes\' apart, undefined included', async () => {
  const text = 'import torch\nx = torch.zeros(3)\ny = x + 1\n';
  const tree = (await parsePython(text))!;
  const root = copyTree(tree, text);
  tree.delete();
  const memo = new NodeMemo<string | undefined>();
  const other = new NodeMemo<string>();
  const [statement] = root.children.slice(1);
  const inner = statement!.children[0]!;
  assert.equal(memo.has(statement!), false);
  memo.set(statement!, 'statement').set(inner, undefined);
  other.set(inner, 'other memo');
  assert.equal(memo.get(statement!), 'statement');
  assert.equal(memo.has(inner), true);
  assert.equal(memo.get(inner), undefined);
  assert.equal(other.get(inner), 'other memo');
  assert.equal(other.has(statement!), false);
  assert.equal(memo.has(root.children[2]!), false);
  memo.set(root, 'root');
  assert.equal(memo.get(root), 'root');
});
