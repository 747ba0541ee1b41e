// Dicts in the program model keyed by integers as well as strings (`{8: [...], 16: [...]}[output_stride]`): an
// integer key finds its entry, the same digits as a string do not, and keys() / items() / `in` give the integers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parsePython } from '../../server/src/engine/parser';
import { ProgramModel } from '../../server/src/engine/program/interpreter';
import type { Value } from '../../server/src/engine/program/values';

async function assigned(source: string): Promise<{ value: (name: string) => Value | undefined; dispose: () => void }> {
  const tree = await parsePython(source);
  if (!tree) throw new Error('parse failed');
  const model = new ProgramModel(tree.rootNode);
  return { value: (name) => model.assigned.get(name)?.[0], dispose: () => tree.delete() };
}

/** A value as plain data (numbers, strings, booleans, lists), or its kind where it is none of those. */
function plain(value: Value | undefined): unknown {
  if (value?.kind === 'number' || value?.kind === 'string' || value?.kind === 'bool') return value.value;
  if (value?.kind === 'list') return value.items.map(plain);
  return value?.kind;
}

test('a dict keyed by integers: subscript, get, in, keys, items, a comprehension and a merge', async () => {
  const { value, dispose } = await assigned(`
STRIDES = {8: [False, True, True], 16: [False, False, True]}
out_stride = 16
a = STRIDES[out_stride]
b = STRIDES.get(8)
c = STRIDES.get(32, "none")
d = 8 in STRIDES
e = "8" in STRIDES
f = list(STRIDES.keys())
g = [k * 2 for k, v in STRIDES.items()]
h = {k: k // 4 for k in (8, 16)}[16]
i = (STRIDES | {32: [True, True, True]})[32]
j = {"8": "text"}.get(8, "missing")
missing = {8: "number"}.get("8", "missing")
`);
  try {
    assert.deepEqual(plain(value('a')), [false, false, true]);
    assert.deepEqual(plain(value('b')), [false, true, true]);
    assert.equal(plain(value('c')), 'none');
    assert.equal(plain(value('d')), true);
    assert.equal(plain(value('e')), false);
    assert.deepEqual(plain(value('f')), [8, 16]);
    assert.deepEqual(plain(value('g')), [16, 32]);
    assert.equal(plain(value('h')), 4);
    assert.deepEqual(plain(value('i')), [true, true, true]);
    assert.equal(plain(value('j')), 'missing');
    assert.equal(plain(value('missing')), 'missing');
  } finally {
    dispose();
  }
});
