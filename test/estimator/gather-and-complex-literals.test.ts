// Two things the forward trace undercounted (issue #13, set 11): gather keeps its whole input for backward (a copy
// distribution over an extended vocabulary, of which a loss picks one probability per row), and arithmetic with a
// Python complex literal (`1j * freq`, a diagonal state-space kernel's poles) is complex64, 8 bytes an element, as are
// the functions of it that follow (exp, einsum). The fixtures are small scripts of their own; the figures are worked
// by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';
import type { LayerNetSpec } from '../../server/src/estimator/types';

const gatherScript = `import torch
import torch.nn as nn


class Picker(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(32, 1000)

    def forward(self, x, gold):
        dist = self.proj(x) * 2
        picked = dist.gather(1, gold.unsqueeze(1))
        return -(picked + 1e-9).log().mean()


model = Picker().cuda()
opt = torch.optim.Adagrad(model.parameters())
for step in range(4):
    x = torch.randn(16, 32, device="cuda")
    gold = torch.randint(0, 1000, (16,), device="cuda")
    loss = model(x, gold)
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('gather keeps the whole input it picks from, not only the picked values', async () => {
  const r = await estimateText(gatherScript, 'gather-pick.py');
  assert.equal(r.unresolved, undefined);
  const spec = r.config.rebuildAt!(16) as LayerNetSpec;
  assert.ok(!spec.forwardUntraced, 'forward() is followed');
  // Per sample: the scaled distribution gather reads (1000; the product with a number keeps nothing, the linear
  // keeps the step's input), and the log's input (1).
  assert.equal(spec.savedElementsPerSample, 1000 + 1);
});

const kernelScript = `import math
import torch
import torch.nn as nn


class DiagonalKernel(nn.Module):
    def __init__(self, channels, states):
        super().__init__()
        self.log_step = nn.Parameter(torch.zeros(channels))
        self.decay = nn.Parameter(torch.zeros(channels, states))
        self.freq = nn.Parameter(math.pi * torch.arange(states).float().repeat(channels, 1))
        self.out = nn.Parameter(torch.view_as_real(torch.randn(channels, states, dtype=torch.cfloat)))

    def forward(self, length):
        poles = -torch.exp(self.decay) + 1j * self.freq
        steps = poles * torch.exp(self.log_step).unsqueeze(-1)
        powers = torch.exp(steps.unsqueeze(-1) * torch.arange(length, device=poles.device))
        return torch.einsum("cn,cnl->cl", torch.view_as_complex(self.out), powers).real


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.kernel = DiagonalKernel(64, 16)
        self.proj = nn.Conv1d(64, 64, 1)

    def forward(self, u):
        k = self.kernel(u.size(-1))
        return self.proj(u * k)


model = Net().cuda()
opt = torch.optim.Adam(model.parameters())
for step in range(4):
    u = torch.randn(8, 64, 2048, device="cuda")
    loss = model(u).square().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('a parameter made as a number times a cast, repeated range is counted by its shape', async () => {
  const r = await estimateText(kernelScript, 'diagonal-kernel.py');
  // log_step 64, decay and freq 64 x 16 each, out (64, 16, 2), the convolution 64 x 64 + 64.
  assert.equal(r.detected.parameters, 64 + 2 * 64 * 16 + 64 * 16 * 2 + 64 * 64 + 64);
});

test('arithmetic with a complex literal is complex64, and so are the functions of it that follow', async () => {
  const r = await estimateText(kernelScript, 'diagonal-kernel.py');
  const spec = r.config.rebuildAt!(2048) as LayerNetSpec;
  assert.ok(!spec.forwardUntraced, 'forward() is followed');
  // Kept: the (64, 16, 2048) powers exp keeps (its backward reads its result) and einsum reads, complex64: two fp32
  // elements each; u * k (64 x 2048), which the convolution keeps; and the kernel's small (64, 16) tensors (the
  // poles, complex, exp's results, the complex view of `out`), 5,184 elements in all.
  const powers = 2 * 64 * 16 * 2048;
  assert.equal(spec.savedElementsPerSample, powers + 64 * 2048 + 2 * 64 * 16 + 64 * 16 + 2 * 64 * 16 + 64);
});
