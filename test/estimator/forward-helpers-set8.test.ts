// Forwards and step calls written the way diffusion, patch and hand-written CNN models are: a step whose model call
// sits in a helper the loop calls (its timesteps and labels come from the loop's batch through the helper's
// parameters), a chained assignment inside forward (`h = w = int(n ** 0.5)`), an einsum that only reorders one
// operand's axes (a view), and a forward that calls checkpoint() on each block itself.
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

const explicitCheckpointScript = `import argparse

import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)

    def forward(self, x):
        return x + self.fc2(torch.relu(self.fc1(x)))


class Stage(nn.Module):
    def __init__(self, dim, depth, use_ckpt):
        super().__init__()
        self.use_ckpt = use_ckpt
        self.proj = nn.Linear(dim, dim)
        self.blocks = nn.ModuleList([Block(dim) for _ in range(depth)])

    def forward(self, x):
        x = self.proj(x)
        for blk in self.blocks:
            x = checkpoint(blk, x, use_reentrant=False) if self.use_ckpt else blk(x)
        return x


class Net(nn.Module):
    def __init__(self, dim=64, use_ckpt=True):
        super().__init__()
        self.stages = nn.Sequential(Stage(dim, 3, use_ckpt), Stage(dim, 3, use_ckpt))
        self.head = nn.Linear(dim, 10)

    def forward(self, x):
        return self.head(self.stages(x))


parser = argparse.ArgumentParser()
parser.add_argument("--no-ckpt", action="store_false", dest="ckpt")
args = parser.parse_args()
model = Net(use_ckpt=args.ckpt).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(32, 64, device="cuda")
    loss = nn.functional.cross_entropy(model(x), torch.randint(0, 10, (32,), device="cuda"))
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('checkpointing: the modules forward gives checkpoint() itself are the blocks, not the stages that hold them', async () => {
  const r = await estimateText(explicitCheckpointScript, 'explicit_ckpt.py');
  assert.equal(r.detected.checkpointing, true);
  const spec = r.config.rebuildAt!(1) as LayerNetSpec;
  // Two stages of three checkpointed blocks: six blocks, each keeping its 64-wide input.
  assert.deepEqual(spec.blockInputElements, [64, 64, 64, 64, 64, 64]);
  // Each block keeps fc1's input (64), ReLU's output (256, which fc2 keeps too).
  assert.deepEqual(spec.blockSavedElements, [320, 320, 320, 320, 320, 320]);
  assert.equal(spec.checkpointSegments, false);
});

const maxOverTimeScript = `import torch
import torch.nn as nn
import torch.nn.functional as F

class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 8, kernel_size=3, padding=1)
        self.fc = nn.Linear(8, 5)

    def forward(self, x):
        x = F.relu_(self.conv(x.unsqueeze(1)))
        x = torch.mean(x, dim=3)
        (x1, _) = torch.max(x, dim=2)
        x2 = torch.mean(x, dim=2)
        return torch.sigmoid(self.fc(x1 + x2))

model = Tagger().cuda()
opt = torch.optim.Adam(model.parameters())
for step in range(3):
    feats = torch.randn(16, 100, 20, device="cuda")
    target = torch.rand(16, 5, device="cuda")
    loss = F.binary_cross_entropy(model(feats), target)
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('forward: torch.max(x, dim) gives (values, indices), and backward keeps the int64 indices', async () => {
  const r = await estimateText(maxOverTimeScript, 'max_over_time.py');
  const spec = r.config.rebuildAt!(100) as LayerNetSpec;
  assert.ok(!spec.forwardUntraced);
  assert.equal(spec.outputElementsPerSample, 5);
  // The in-place ReLU keeps its 8 x 100 x 20 output; the linear its 8 inputs, the sigmoid its 5 outputs. The max
  // over time keeps its 8 indices (int64).
  assert.equal(spec.savedElementsPerSample, 8 * 100 * 20 + 8 + 5);
  assert.equal(spec.fixedBytesPerSample, 8 * 8);
});

const routerScript = `import torch
import torch.nn as nn
import torch.nn.functional as F

class Router(nn.Module):
    def __init__(self, d=32, experts=4):
        super().__init__()
        self.experts = experts
        self.gate = nn.Linear(d, experts)
        self.proj = nn.Linear(d, d)

    def forward(self, x):
        probs = self.gate(x).softmax(dim=-1)
        weight, idx = probs.max(dim=-1)
        mask = F.one_hot(idx, self.experts)
        slot = torch.cumsum(mask, dim=1) * mask
        return self.proj(x) * weight.unsqueeze(-1) + slot.sum(-1, keepdim=True)

model = Router().cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(16, 10, 32, device="cuda")
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('forward: x.max(dim) unpacks into values and indices, F.one_hot adds a class axis, cumsum keeps the shape', async () => {
  const r = await estimateText(routerScript, 'router.py');
  const spec = r.config.rebuildAt!(10) as LayerNetSpec;
  assert.ok(!spec.forwardUntraced);
  assert.equal(spec.outputElementsPerSample, 10 * 32);
  // softmax keeps its 10 x 4 output; the product keeps the projection (10 x 32) and the routing weight (10); the
  // max keeps its 10 int64 indices.
  assert.equal(spec.savedElementsPerSample, 10 * 4 + 10 * 32 + 10);
  assert.equal(spec.fixedBytesPerSample, 10 * 8);
});
