// Python's `&`, `|` and `^` on integers in the program model: a corner's bits (`(c >> 2) & 1`) in the lists a
// buffer is made of, so that the buffer is known to hold integers; exact beyond 32 bits (hash primes), and not
// computed for floats.
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

const plain = (value: Value | undefined): unknown =>
  value?.kind === 'number' ? value.value : value?.kind === 'list' ? value.items.map(plain) : value?.kind;

test('bit operations on integers, in a comprehension and past 32 bits', async () => {
  const { value, dispose } = await assigned(`
corners = [[(c >> 2) & 1, (c >> 1) & 1, c & 1] for c in range(4)]
mixed = 2654435761 ^ 805459861
both = 12 | 3
real = 2.0 ^ 1
`);
  try {
    assert.deepEqual(plain(value('corners')), [[0, 0, 0], [0, 0, 1], [0, 1, 0], [0, 1, 1]]);
    assert.equal(plain(value('mixed')), Number(2654435761n ^ 805459861n));
    assert.equal(plain(value('both')), 15);
    assert.equal(plain(value('real')), 'unknown');
  } finally {
    dispose();
  }
});
