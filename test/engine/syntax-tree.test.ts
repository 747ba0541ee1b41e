// The engine's copy of a tree-sitter tree (engine/syntax-tree.ts) must say what tree-sitter's own nodes say: types,
// ranges, rows and columns, fields, named, missing and error flags, parents. It is made by calling the runtime's
// cursor functions directly when they can be reached (engine/tree-walk.ts); the public TreeCursor must give the same.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import type { Node as TreeSitterNode } from 'web-tree-sitter';
import { DocumentStore } from '../../server/src/engine/documents';
import { loadedParser, parsePython } from '../../server/src/engine/parser';
import { copyTree, flattenTree, flattenTreeInSlices, unflattenTree } from '../../server/src/engine/syntax-tree';
import type { SyntaxNode } from '../../server/src/engine/syntax-tree';
import { directWalkAvailable, setDirectWalk } from '../../server/src/engine/tree-walk';
import { generateTrainingScript } from '../../scripts/bench/generate';
import { repoRoot } from '../helpers/analysis';

/** Every difference between a copy and tree-sitter's nodes, as paths (none expected). */
function differences(copy: SyntaxNode, node: TreeSitterNode, where = 'root'): string[] {
  const found: string[] = [];
  const expect = (what: string, ours: unknown, theirs: unknown) => {
    if (ours !== theirs) found.push(`${where}: ${what} ${String(ours)} != ${String(theirs)}`);
  };
  expect('type', copy.type, node.type);
  expect('start', copy.startIndex, node.startIndex);
  expect('end', copy.endIndex, node.endIndex);
  expect('start row', copy.startPosition.row, node.startPosition.row);
  expect('start column', copy.startPosition.column, node.startPosition.column);
  expect('end row', copy.endPosition.row, node.endPosition.row);
  expect('end column', copy.endPosition.column, node.endPosition.column);
  expect('named', copy.isNamed, node.isNamed);
  expect('missing', copy.isMissing, node.isMissing);
  expect('has error', copy.hasError, node.hasError);
  expect('child count', copy.children.length, node.childCount);
  expect('named child count', copy.namedChildren.length, node.namedChildCount);
  for (let i = 0; i < Math.min(copy.children.length, node.childCount); i++) {
    const child = copy.children[i]!;
    if (child.parent !== copy) found.push(`${where}/${i}: parent`);
    expect(`field of child ${i}`, copy.childFields[i] ?? null, node.fieldNameForChild(i));
    found.push(...differences(child, node.child(i)!, `${where}/${i}`));
    if (found.length > 20) break;
  }
  return found;
}

const samples: Array<[string, string]> = [
  ['generated script', generateTrainingScript(400, 3)],
  ['example', fs.readFileSync(path.join(repoRoot, 'examples', 'train_gpt2.py'), 'utf8')],
  ['syntax errors', 'def f(:\n    x = [1, 2\n  y = 3\nclass C(\n    pass\nfor i in range(3) print(i)\n'],
  ['CRLF and lone CR', 'import torch\r\nx = torch.zeros(3)\ry = x.sum()\r\n\r\nprint(y)\n'],
  ['non-BMP text', 's = "\u{1F600} caf\u00e9"\nt = f"{s!r} \u{1F680}"\nu = s + t  # \u{1F4A5}\n'],
  ['empty', ''],
];

for (const direct of [true, false]) {
  test(`the tree copy says what tree-sitter's nodes say (${direct ? 'runtime cursor functions' : 'public TreeCursor'})`, async () => {
    for (const [name, text] of samples) {
      const tree = (await parsePython(text))!;
      if (direct) assert.ok(directWalkAvailable(), 'the runtime cursor functions are reachable in this build');
      setDirectWalk(direct);
      try {
        assert.deepEqual(differences(copyTree(tree, text), tree.rootNode), [], name);
      } finally {
        setDirectWalk(true);
        tree.delete();
      }
    }
  });
}

test('a copy flattened into one table (the estimate worker reads it) says what tree-sitter says, however the copy was made', async () => {
  const flatCopy = (root: SyntaxNode, text: string) => {
    const language = loadedParser()!.language!;
    return unflattenTree(flattenTree(root, language.types, language.fields), text);
  };
  for (const [name, text] of samples) {
    const tree = (await parsePython(text))!;
    try {
      assert.deepEqual(differences(flatCopy(copyTree(tree, text), text), tree.rootNode), [], name);
    } finally {
      tree.delete();
    }
  }
  // A document edited statement by statement (its root is a node of its own, its statements copied apart), and one
  // parsed in parts: compared with a fresh parse of the same text.
  const store = new DocumentStore();
  let text = generateTrainingScript(300, 4);
  let state = await store.open('mem://flat.py', 1, text);
  store.modelOf(state);
  for (let version = 2; version <= 6; version++) {
    const at = text.indexOf('\n', (text.length * version) / 8) + 1;
    state = (await store.change('mem://flat.py', version, [{ range: { start: positionOfIndex(text, at), end: positionOfIndex(text, at) }, text: `z${version} = ${version}\n` }]))!;
    text = text.slice(0, at) + `z${version} = ${version}\n` + text.slice(at);
    const root = store.modelOf(state)!.root;
    const fresh = (await parsePython(text))!;
    try {
      assert.deepEqual(differences(flatCopy(root, text), fresh.rootNode), [], `after edit ${version}`);
    } finally {
      fresh.delete();
    }
  }
  store.close('mem://flat.py');
  const long = generateTrainingScript(6000, 2);
  const parts = await store.open('mem://parts.py', 1, long);
  assert.ok(parts.treeBehind, 'the long script was parsed in parts');
  const fresh = (await parsePython(long))!;
  try {
    assert.deepEqual(differences(flatCopy(store.modelOf(parts)!.root, long), fresh.rootNode), [], 'parsed in parts');
  } finally {
    fresh.delete();
    store.close('mem://parts.py');
  }
});

test('a copy flattened in slices is the one flattened at once, and a flattening whose copy went stale stops', async () => {
  const text = generateTrainingScript(6000, 7);
  const tree = (await parsePython(text))!;
  const root = copyTree(tree, text);
  const { types, fields } = tree.language;
  tree.delete();
  assert.deepEqual(await flattenTreeInSlices(root, types, fields, () => true), flattenTree(root, types, fields));
  // Slices end by time (a 6,000-line copy takes one or several): a flattening asked after a pause stops there.
  let asked = 0;
  const stale = await flattenTreeInSlices(root, types, fields, () => (asked++, false));
  assert.equal(stale === undefined, asked > 0);
});

/** The LSP position of an offset (lines end with \n). */
function positionOfIndex(text: string, offset: number) {
  const before = text.slice(0, offset);
  const line = before.split('\n').length - 1;
  return { line, character: offset - (before.lastIndexOf('\n') + 1) };
}

test('after an edit inside a deeply nested statement, the statements after it are copied right (the cursor is handed back)', async () => {
  // Deep nesting grows the cursor's stack past its first allocation while the copy walks the edited statement.
  const nested = (inner: string) => 'x = ' + '['.repeat(300) + inner + ']'.repeat(300);
  const before = `${nested('1')}\ny = 2\nz = [y]\n`;
  const store = new DocumentStore();
  store.modelOf(await store.open('mem://deep.py', 1, before));
  const state = (await store.change('mem://deep.py', 2, [{ range: { start: { line: 0, character: 304 }, end: { line: 0, character: 305 } }, text: '7' }]))!;
  assert.equal(state.text, `${nested('7')}\ny = 2\nz = [y]\n`);
  const copy = store.modelOf(state)!.root;
  assert.deepEqual(differences(copy, store.currentTree(state)!.rootNode), []);
  store.close('mem://deep.py');
});

test('a node is one object however it is reached (children, fields, descendants, parents, the collector), with an id of its own', async () => {
  const text = generateTrainingScript(120, 5);
  const tree = (await parsePython(text))!;
  const gathered: SyntaxNode[] = [];
  const root = copyTree(tree, text, { types: new Set(['call', 'identifier']), statement: (_, nodes) => gathered.push(...nodes) });
  tree.delete();
  // Every node by walking the children, each reached once.
  const walked: SyntaxNode[] = [];
  const stack = [...root.children].reverse();
  while (stack.length > 0) {
    const node = stack.pop()!;
    walked.push(node);
    for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]!);
  }
  assert.equal(new Set(walked.map((node) => node.id)).size, walked.length, 'ids are unique');
  const calls = root.descendantsOfType('call');
  assert.deepEqual(calls, walked.filter((node) => node.type === 'call'));
  assert.deepEqual(gathered, walked.filter((node) => node.type === 'call' || node.type === 'identifier'));
  for (const call of calls) {
    const callee = call.childForFieldName('function')!;
    assert.equal(callee, call.children[call.childFields.indexOf('function')]);
    assert.equal(callee.parent, call);
    assert.equal(call.childForFieldName('no such field'), null);
  }
  for (const statement of root.children) assert.equal(statement.parent, root);
});

test('a copy keeps its nodes as numbers, off the JavaScript heap, until they are asked for', async () => {
  v8.setFlagsFromString('--expose-gc');
  const collect = vm.runInNewContext('gc') as () => void;
  const text = generateTrainingScript(2000, 9);
  const tree = (await parsePython(text))!;
  const nodes = tree.rootNode.descendantCount;
  collect();
  const before = process.memoryUsage().heapUsed;
  const root = copyTree(tree, text);
  collect();
  const held = process.memoryUsage().heapUsed - before;
  tree.delete();
  assert.ok(root.children.length > 100);
  // An object per node held about 120 bytes a node; the statements' objects alone, a few.
  assert.ok(held / nodes < 16, `${(held / nodes).toFixed(1)} bytes of heap a node`);
});
