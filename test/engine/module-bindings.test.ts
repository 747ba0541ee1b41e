// The module scope's bindings are read statement by statement: a statement's assignments and loops bind at module
// level unless a function of the statement holds them (a class body's do, a method's and a decorated function's do not).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parsePython } from '../../server/src/engine/parser';
import { recoverTree } from '../../server/src/engine/recovery';
import { SemanticModel } from '../../server/src/engine/semantic/model';

const SOURCE = `import torch
model = torch.nn.Linear(4, 4)

@torch.no_grad()
def predict(x):
    model = x
    for step in range(3):
        total = step
    return model

class Trainer:
    model = None
    width = 8

    def fit(self):
        model = self
        def inner():
            width = 2
            return width
        return inner

    steps = 3

if __name__ == "__main__":
    for step in range(2):
        total = step
    total += 1

    def main():
        total = 0
        return total

    model = Trainer()
`;

async function moduleRows(name: string): Promise<number[]> {
  const tree = (await parsePython(SOURCE))!;
  const recovered = await recoverTree(SOURCE, tree);
  const model = new SemanticModel(recovered.tree, recovered.text);
  return model.definitionsIn(model.root, name).map((definition) => definition.site.startPosition.row + 1);
}

test('module bindings: top level, class bodies and blocks, but nothing a function holds', async () => {
  assert.deepEqual(await moduleRows('model'), [2, 12, 33]);
  assert.deepEqual(await moduleRows('width'), [13]);
  assert.deepEqual(await moduleRows('steps'), [22]);
  assert.deepEqual(await moduleRows('step'), [25]);
  assert.deepEqual(await moduleRows('total'), [26, 27]);
});
