// A dataset whose sample is one tensor (`return pixels.view(3, H, W)`), its batches bound to one name (`for i, image
// in enumerate(loader)`): the step's input is that tensor, stacked. And a no_grad call of the model on one batch
// before the loop (a data-dependent initialisation) is not the step whose forward is traced.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';

const SIZE = 96;
const BATCH = 32;

const flow = (sample: string, before: string) => `import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class ActNorm(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.loc = nn.Parameter(torch.zeros(1, c, 1, 1))
        self.scale = nn.Parameter(torch.ones(1, c, 1, 1))
        self.register_buffer("mask", torch.triu(torch.ones(c, c), 1))

    def forward(self, x):
        return self.scale * (x + self.loc)


class Coupling(nn.Module):
    def __init__(self, c, hidden):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(c // 2, hidden, 3, padding=1), nn.ReLU(), nn.Conv2d(hidden, c, 3, padding=1))

    def forward(self, x):
        a, b = x.chunk(2, 1)
        log_s, t = self.net(a).chunk(2, 1)
        return torch.cat([a, (b + t) * torch.sigmoid(log_s + 2)], 1)


class Flow(nn.Module):
    def __init__(self, c, hidden):
        super().__init__()
        self.steps = nn.ModuleList([nn.Sequential(ActNorm(c * 4), Coupling(c * 4, hidden)) for _ in range(4)])

    def forward(self, x):
        b, c, h, w = x.shape
        out = x.view(b, c, h // 2, 2, w // 2, 2).permute(0, 1, 3, 5, 2, 4).reshape(b, c * 4, h // 2, w // 2)
        for step in self.steps:
            out = step(out)
        return out


class Images(Dataset):
    def __init__(self, n, size):
        self.n, self.size = n, size

    def __len__(self):
        return self.n

    def __getitem__(self, i):
${sample}


def main():
    model = Flow(3, 256).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    loader = DataLoader(Images(128, ${SIZE}), batch_size=${BATCH}, shuffle=True, drop_last=True)
${before}
    for i, image in enumerate(loader):
        image = image.cuda()
        out = model(image + torch.rand_like(image) / 32)
        loss = out.pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()


if __name__ == "__main__":
    main()
`;

// The sample's shape written out in the call that makes it, and one only a trace of __getitem__ gives.
const written = '        return torch.rand(3, self.size, self.size)';
const viewed = '        pixels = torch.rand(3 * self.size * self.size)\n        return pixels.view(3, self.size, self.size)';
const initialisation = `    with torch.no_grad():
        first = next(iter(loader)).cuda()
        model(first + torch.rand_like(first) / 32)
        del first`;

// The input's elements per sample after the squeeze: 12 channels at half the size; each coupling's hidden layer
// alone keeps 256 channels at that size for every sample of the batch.
const HIDDEN_KEPT = BATCH * 256 * (SIZE / 2) ** 2 * 4;

test('a one-tensor sample bound to one name is the step\'s input, whatever makes its shape', async () => {
  const reference = await estimateText(flow(written, ''), '/tmp/one_tensor_written.py');
  const traced = await estimateText(flow(viewed, ''), '/tmp/one_tensor_viewed.py');
  assert.ok(reference.breakdown.activations > 4 * HIDDEN_KEPT, `${reference.breakdown.activations}`);
  assert.equal(traced.breakdown.activations, reference.breakdown.activations);
});

test('a no_grad call of the model before the training loop is not the step', async () => {
  const step = await estimateText(flow(viewed, ''), '/tmp/one_tensor_step.py');
  const initialised = await estimateText(flow(viewed, initialisation), '/tmp/one_tensor_initialised.py');
  assert.ok(initialised.breakdown.activations > 4 * HIDDEN_KEPT, `${initialised.breakdown.activations}`);
  assert.equal(initialised.breakdown.activations, step.breakdown.activations);
  assert.equal(initialised.peakAllocated, step.peakAllocated);
});
