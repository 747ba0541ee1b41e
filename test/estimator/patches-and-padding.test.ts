// A series cut into patches (`x.unfold(dim, size, step)` after a padding layer) and the data such a model reads: a
// Dataset slicing windows out of a series the script makes from sized tensors (`torch.sin(...) + noise`). Before,
// the trace took unfold's output at its input's shape, did not know the padding layers, and the sample was not
// found (the series was no tensor the program model could size), so the input was guessed from the first layer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';
import type { LayerNetSpec } from '../../server/src/estimator/types';

const patchScript = `import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

LOOKBACK, VARIABLES, PATCH, STRIDE, WIDTH = 96, 7, 16, 8, 32


class Windows(Dataset):
    def __init__(self, series, length):
        self.series, self.length = series, length

    def __len__(self):
        return self.series.shape[0] - self.length

    def __getitem__(self, i):
        return self.series[i:i + self.length], self.series[i + self.length]


class Patcher(nn.Module):
    def __init__(self):
        super().__init__()
        self.pad = nn.ReplicationPad1d((0, STRIDE))
        self.embed = nn.Linear(PATCH, WIDTH)
        patches = (LOOKBACK - PATCH) // STRIDE + 2
        self.head = nn.Linear(VARIABLES * patches * WIDTH, VARIABLES)

    def forward(self, x):
        x = self.pad(x.permute(0, 2, 1))
        x = x.unfold(-1, PATCH, STRIDE)
        return self.head(self.embed(x).flatten(1))


steps = torch.arange(2000).float()
series = torch.sin(steps[:, None] / torch.linspace(4, 40, VARIABLES)) + 0.1 * torch.randn(2000, VARIABLES)
loader = DataLoader(Windows(series, LOOKBACK), batch_size=16)
model = Patcher().cuda()
opt = torch.optim.Adam(model.parameters())
for x, y in loader:
    loss = nn.functional.mse_loss(model(x.cuda()), y.cuda())
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('a window sliced from a series made of sized tensors, padded and cut into patches, has its shape at every step', async () => {
  const r = await estimateText(patchScript, 'patches.py');
  assert.equal(r.unresolved, undefined);
  const spec = r.config.rebuildAt!(16) as LayerNetSpec;
  assert.ok(!spec.forwardUntraced, 'forward() is followed');
  assert.deepEqual(spec.unmodelledOps ?? [], [], 'unfold and the padding layer are modelled');
  assert.ok(!r.assumptions.some((a) => a.includes('layer types not modelled')), r.assumptions.join('; '));
  // (96 + 8 - 16) // 8 + 1 = 12 patches of 16 for each of 7 variables, embedded at 32: the largest tensor a sample
  // makes is 7 x 12 x 32, and the head returns one value per variable.
  assert.equal(spec.largestElementsPerSample, 7 * 12 * 32);
  assert.equal(spec.outputElementsPerSample, 7);
});

const padScript = `import torch
import torch.nn as nn

net = nn.Sequential(nn.ZeroPad2d(2), nn.Conv2d(3, 8, 5), nn.ReflectionPad2d((1, 1, 0, 0)), nn.Conv2d(8, 4, 3, padding=(1, 0))).cuda()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(4, 3, 32, 32, device="cuda")
    loss = net(x).square().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('padding layers widen the map by what they name: one number for every side, or a tuple from the last axis back', async () => {
  const r = await estimateText(padScript, 'pads.py');
  const spec = r.config.rebuildAt!(4) as LayerNetSpec;
  assert.deepEqual(spec.unmodelledOps ?? [], []);
  assert.ok(!r.assumptions.some((a) => a.includes('layer types not modelled')), r.assumptions.join('; '));
  // 32 + 2 + 2 - 5 + 1 = 32; padded to 32 x 34, then a 3 x 3 conv with padding (1, 0): 32 x 32 again, 4 channels.
  assert.equal(spec.outputElementsPerSample, 4 * 32 * 32);
  assert.equal(spec.largestElementsPerSample, 8 * 32 * 34);
});
