// The shapes of tensors a script makes, as the program model's values give them (engine/program/values.ts): one
// dispatcher recognises how a call makes a tensor, and every reader (whole shapes, partly known shapes, shapes built
// from sized parts, tensors from nested lists) sizes the same constructors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parsePython } from '../../server/src/engine/parser';
import { ProgramModel } from '../../server/src/engine/program/interpreter';
import { listTensorShape, madeTensorShape, partialTensorShape, tensorShape, type CallResultValue } from '../../server/src/engine/program/values';

async function calls(source: string): Promise<{ call: (name: string) => CallResultValue; dispose: () => void }> {
  const tree = await parsePython(source);
  if (!tree) throw new Error('parse failed');
  const model = new ProgramModel(tree.rootNode);
  const call = (name: string): CallResultValue => {
    const value = model.assigned.get(name)?.[0];
    assert.equal(value?.kind, 'call', `${name} is a call`);
    return value as CallResultValue;
  };
  return { call, dispose: () => tree.delete() };
}

test('factories with their sizes where each takes them: positional, a tuple, size=, after randint\'s bounds, full\'s and normal\'s first or third argument', async () => {
  const { call, dispose } = await calls(`import torch
B, T = 8, 128
a = torch.zeros(B, T)
b = torch.randn((B, T, 4))
c = torch.randint(0, 50257, (B, T))
d = torch.full((B, T), 0)
e = torch.normal(0.0, 1.0, (B, 16))
f = torch.normal(2.0, 3.0, size=(B,))
g = torch.randperm(B)
`);
  try {
    assert.deepEqual(tensorShape(call('a'))?.dims, [8, 128]);
    assert.deepEqual(tensorShape(call('b'))?.dims, [8, 128, 4]);
    assert.deepEqual(tensorShape(call('c'))?.dims, [8, 128]);
    assert.deepEqual(tensorShape(call('d'))?.dims, [8, 128]);
    // torch.normal(mean, std, size): the mean and the std are no sizes.
    assert.deepEqual(tensorShape(call('e'))?.dims, [8, 16]);
    assert.deepEqual(tensorShape(call('f'))?.dims, [8]);
    assert.deepEqual(tensorShape(call('g'))?.dims, [8]);
    // The readers of partly known shapes and of shapes built from parts read the same constructors (lines 0-based:
    // B's, where the size was given).
    assert.deepEqual(partialTensorShape(call('e'))?.dims, [8, 16]);
    assert.deepEqual(partialTensorShape(call('g')), { dims: [8], line: 1, how: 'literal', integer: true });
    assert.deepEqual(madeTensorShape(call('c')), [8, 128]);
  } finally {
    dispose();
  }
});

test('a made tensor reshaped to sizes the script gives, whatever the factory: whole where all are known, partly where one is left to the others', async () => {
  const { call, dispose } = await calls(`import torch
weights = torch.ones(1000)
a = torch.multinomial(weights, 64 * 5).view(64, 5)
b = torch.multinomial(weights, 64 * 5).view(-1, 5)
c = torch.zeros(64 * 5).view(64, 5)
d = torch.randint(0, 100, (640,)).view(-1, 10)
`);
  try {
    assert.deepEqual(tensorShape(call('a'))?.dims, [64, 5]);
    assert.deepEqual(partialTensorShape(call('a')), { dims: [64, 5], line: 2, how: 'literal', integer: true });
    // `-1` is left to the batch: known past it only.
    assert.equal(tensorShape(call('b')), undefined);
    assert.deepEqual(partialTensorShape(call('b'))?.dims, [undefined, 5]);
    assert.deepEqual(partialTensorShape(call('c')), { dims: [64, 5], line: 4, how: 'literal', integer: false });
    assert.deepEqual(partialTensorShape(call('d')), { dims: [undefined, 10], line: 5, how: 'literal', integer: true });
  } finally {
    dispose();
  }
});

test('shapes built from sized parts and from nested lists', async () => {
  const { call, dispose } = await calls(`import torch
n, d = 16, 64
a = torch.log(torch.arange(1, n + 1).repeat(d, 1))
b = torch.tensor([[1, 2, 3], [4, 5, 6]])
c = torch.tensor([[1, 2, 3], [4, 5]])
`);
  try {
    assert.deepEqual(madeTensorShape(call('a')), [64, 16]);
    assert.equal(tensorShape(call('a')), undefined);
    assert.deepEqual(listTensorShape(call('b')), { dims: [2, 3], integer: true });
    // Ragged lists have no shape.
    assert.equal(listTensorShape(call('c')), undefined);
    assert.equal(madeTensorShape(call('b')), undefined);
  } finally {
    dispose();
  }
});
