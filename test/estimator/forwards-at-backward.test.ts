// One reader says how many forwards' graphs are alive when the step's backward starts, and why
// (estimator/forwards-at-backward.ts): the model called several times, a hub model's wrapper, forwards run in loops,
// a stacked ensemble's members. Each test builds its own small script and reads what the detection found.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parsePython } from '../../server/src/engine/parser';
import { copyTree } from '../../server/src/engine/syntax-tree';
import { detectConfig } from '../../server/src/estimator/index';
import type { ForwardsAtBackward } from '../../server/src/estimator/forwards-at-backward';

async function forwardsOf(text: string): Promise<ForwardsAtBackward | undefined> {
  const tree = (await parsePython(text))!;
  const root = copyTree(tree, text);
  tree.delete();
  return detectConfig({ rootNode: root }, text, '').forwards;
}

/** A small MLP trained by a step whose body is `step` (the loss is `loss`). */
const mlpScript = (step: string[]): string => [
  'import torch',
  'import torch.nn as nn',
  'model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 8)).cuda()',
  'opt = torch.optim.SGD(model.parameters(), lr=0.1)',
  'for it in range(10):',
  '    x = torch.randn(32, 64, device="cuda")',
  '    y = torch.randn(32, 64, device="cuda")',
  ...step.map((line) => `    ${line}`),
  '    opt.zero_grad()',
  '    loss.backward()',
  '    opt.step()',
  '',
].join('\n');

test('one forward before the backward: one batch', async () => {
  const found = await forwardsOf(mlpScript(['loss = model(x).pow(2).mean()']));
  assert.deepEqual(found && { why: found.why, forwards: found.forwards, members: found.members, batches: found.batches }, { why: 'one', forwards: 1, members: 1, batches: 1 });
});

test('the model called twice before one backward: two batches, from the line of the first call', async () => {
  const found = await forwardsOf(mlpScript(['a = model(x)', 'b = model(y)', 'loss = (a - b).pow(2).mean()']));
  assert.equal(found?.why, 'calls');
  assert.equal(found.forwards, 2);
  assert.equal(found.batches, 2);
  assert.equal(found.line, 7);
  assert.equal(found.graphs, undefined);
});

test('a loss summed over a loop of forwards: the loops\' graphs, sized by their rows rather than as whole batches', async () => {
  const found = await forwardsOf(mlpScript(['loss = 0', 'for k in range(3):', '    loss = loss + model(x * k).pow(2).mean()']));
  assert.equal(found?.why, 'loops');
  // Three kept runs of the one forward, which the graphs size (batches stays one: no ensemble).
  assert.equal(found.forwards, 3);
  assert.equal(found.batches, 1);
  assert.deepEqual(found.graphs?.forwards.map((forward) => forward.kept), [3]);
});

test('a hub model held by a module of the script and called for each of a pair: the wrapper\'s calls', async () => {
  const found = await forwardsOf([
    'import torch',
    'import torch.nn as nn',
    'from transformers import AutoModel',
    'class Encoder(nn.Module):',
    '    def __init__(self):',
    '        super().__init__()',
    '        self.backbone = AutoModel.from_pretrained("bert-base-uncased")',
    '    def forward(self, ids):',
    '        return self.backbone(input_ids=ids).last_hidden_state.mean(1)',
    'encoder = Encoder().cuda()',
    'optimizer = torch.optim.AdamW(encoder.parameters(), lr=2e-5)',
    'for step in range(5):',
    '    a = torch.randint(1000, 30000, (16, 128)).cuda()',
    '    b = torch.randint(1000, 30000, (16, 128)).cuda()',
    '    loss = (encoder(a) - encoder(b)).pow(2).mean()',
    '    optimizer.zero_grad()',
    '    loss.backward()',
    '    optimizer.step()',
    '',
  ].join('\n'));
  assert.equal(found?.why, 'wrapper');
  assert.equal(found.forwards, 2);
  assert.equal(found.batches, 2);
});

test('an ensemble stacked by torch.func: every member runs the batch, one call of the vmapped function', async () => {
  const found = await forwardsOf(`import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, stack_module_state, vmap

models = [nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10)).cuda() for _ in range(3)]
params, buffers = stack_module_state(models)
base = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10)).to("meta")

def fmodel(p, b, x):
    return functional_call(base, (p, b), (x,))

ensemble = vmap(fmodel)
opt = torch.optim.Adam(params.values(), lr=1e-3)
for step in range(3):
    x = torch.randn(3, 128, 32, device="cuda")
    y = torch.randint(0, 10, (3, 128), device="cuda")
    loss = F.cross_entropy(ensemble(params, buffers, x).reshape(-1, 10), y.reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
`);
  assert.deepEqual(found && { why: found.why, forwards: found.forwards, members: found.members, batches: found.batches }, { why: 'one', forwards: 1, members: 3, batches: 3 });
});
