// torch.autograd.graph.save_on_cpu(): what autograd saves goes to host memory, so the GPU keeps what the step holds
// and one operation's tensors at a time in backward, however deep the net. And a forward written once in each branch
// of an `if` (offloaded or not) runs once a step, not twice. Each fixture is a small script of its own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';

const mlpScript = (layers: number, offload: 'on' | 'off' | 'branch'): string => {
  const forward = offload === 'on' ? `    with torch.autograd.graph.save_on_cpu(pin_memory=True):
        loss = model(x).square().mean()`
    : offload === 'off' ? `    loss = model(x).square().mean()`
      : `    if OFFLOAD:
        with torch.autograd.graph.save_on_cpu(pin_memory=True):
            loss = model(x).square().mean()
    else:
        loss = model(x).square().mean()`;
  return `import os
import torch
import torch.nn as nn

OFFLOAD = os.getenv("OFFLOAD", "1") == "1"


class Deep(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(1024, 1024) for _ in range(n))

    def forward(self, x):
        for layer in self.layers:
            x = torch.relu(layer(x))
        return x


model = Deep(${layers}).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(4):
    x = torch.randn(4096, 1024, device="cuda")
${forward}
    opt.zero_grad()
    loss.backward()
    opt.step()
`;
};

test('save_on_cpu(): the saved activations leave the GPU, which keeps one operation\'s tensors whatever the depth', async () => {
  const [kept, offloaded, deeper] = await Promise.all([
    estimateText(mlpScript(8, 'off'), 'kept.py'), estimateText(mlpScript(8, 'on'), 'offloaded.py'), estimateText(mlpScript(16, 'on'), 'deeper.py')]);
  const activations = (r: typeof kept): number => r.breakdown.activations;
  // Each ReLU keeps its output, which the next Linear keeps as its input (the first Linear's input is the step's):
  // eight tensors of 4,096 x 1,024 fp32, 16 MiB each.
  assert.equal(activations(kept), 8 * 16 * 2 ** 20);
  assert.ok(activations(offloaded) < 16 * 2 ** 20, `offloaded: ${activations(offloaded)}`);
  // Twice the layers: twice the parameters, the same activations on the GPU.
  assert.equal(activations(deeper), activations(offloaded));
  assert.ok(offloaded.assumptions.some((a) => a.includes('save_on_cpu() (line ')));
});

test('a forward written in both branches of an if runs once a step: the branch the settings take', async () => {
  const branch = await estimateText(mlpScript(8, 'branch'), 'branch.py');
  const offloaded = await estimateText(mlpScript(8, 'on'), 'offloaded.py');
  assert.ok(!branch.assumptions.some((a) => /is called \d+ times before one backward/.test(a)), branch.assumptions.join('\n'));
  assert.equal(branch.peakAllocated, offloaded.peakAllocated);
});
