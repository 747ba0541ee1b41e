// Forwards and step calls written the way diffusion and patch models are: a step whose model call sits in a helper
// the loop calls (its timesteps and labels come from the loop's batch through the helper's parameters), a chained
// assignment inside forward (`h = w = int(n ** 0.5)`), and an einsum that only reorders one operand's axes (a view).
// Each fixture is a small script of its own; figures are worked by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';
import type { LayerNetSpec } from '../../server/src/estimator/types';

const helperStepScript = `import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class Tokens(Dataset):
    def __len__(self):
        return 256

    def __getitem__(self, i):
        return torch.randn(16, 32), torch.randint(10, ()).item()


class Conditioned(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(32, 64)
        self.label = nn.Embedding(10, 64)
        self.out = nn.Linear(64, 32)

    def forward(self, x, y):
        h = self.inp(x) + self.label(y)[:, None, :]
        return self.out(torch.relu(h))


class Noiser:
    def __init__(self, scale=0.1):
        self.scale = scale

    def loss(self, model, x0, y):
        noisy = x0 + self.scale * torch.randn_like(x0)
        return ((model(noisy, y) - x0) ** 2).mean()


model = Conditioned().cuda()
noiser = Noiser()
opt = torch.optim.AdamW(model.parameters())
loader = DataLoader(Tokens(), batch_size=32)
for x, y in loader:
    x, y = x.cuda(), y.cuda()
    loss = noiser.loss(model, x, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test("step arguments: a model called inside a helper takes the labels the loop passes the helper, not the input's shape", async () => {
  const r = await estimateText(helperStepScript, 'helper_step.py');
  const spec = r.config.rebuildAt!(16) as LayerNetSpec;
  assert.ok(!spec.forwardUntraced);
  // The labels are one int64 per sample: the embedding gives (1, 64), broadcast over the 16 tokens. ReLU keeps its
  // 16 x 64 output (which the output layer keeps too); the first linear's input is the data, kept by the step.
  assert.equal(spec.savedElementsPerSample, 16 * 64);
  assert.equal(spec.outputElementsPerSample, 16 * 32);
});

const unpatchScript = `import torch
import torch.nn as nn


class Patcher(nn.Module):
    def __init__(self, p=2, c=4, dim=64):
        super().__init__()
        self.p, self.c = p, c
        self.embed = nn.Conv2d(c, dim, kernel_size=p, stride=p)
        self.head = nn.Linear(dim, p * p * c)

    def unpatchify(self, x):
        c, p = self.c, self.p
        h = w = int(x.shape[1] ** 0.5)
        x = x.reshape(x.shape[0], h, w, p, p, c)
        x = torch.einsum("nhwpqc->nchpwq", x)
        return x.reshape(x.shape[0], c, h * p, w * p)

    def forward(self, x):
        x = self.embed(x).flatten(2).transpose(1, 2)
        return self.unpatchify(self.head(x))


model = Patcher().cuda()
opt = torch.optim.AdamW(model.parameters())
for step in range(3):
    x = torch.randn(16, 4, 32, 32, device="cuda")
    loss = (model(x) - x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('forward: a chained assignment gives both names the traced size, and a one-operand einsum that reorders axes is a view', async () => {
  const r = await estimateText(unpatchScript, 'unpatch.py');
  assert.equal(r.detected.imageSize?.value, 32);
  const spec = r.config.rebuildAt!(32) as LayerNetSpec;
  assert.ok(!spec.forwardUntraced);
  // 16 x 16 patches of 2 x 2 x 4 values are put back into a 4 x 32 x 32 image.
  assert.equal(spec.outputElementsPerSample, 4 * 32 * 32);
  // Only the head keeps its 256 x 64 input; the einsum's permutation keeps nothing.
  assert.equal(spec.savedElementsPerSample, 256 * 64);
});
