// Data a Dataset makes with numpy (`np.random.randn(3, n).astype(np.float32)`, then `torch.from_numpy`): read as
// the tensors it becomes, so the sample's length reaches the estimate.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';

const script = (sample: string) => `import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

POINTS = 2048

class Clouds(Dataset):
    def __len__(self):
        return 1000

    def __getitem__(self, i):
${sample}

net = nn.Sequential(nn.Conv1d(3, 64, 1), nn.ReLU(), nn.Conv1d(64, 256, 1), nn.ReLU(), nn.AdaptiveMaxPool1d(1), nn.Flatten(), nn.Linear(256, 10)).cuda()
opt = torch.optim.Adam(net.parameters())
for points, label in DataLoader(Clouds(), batch_size=16):
    loss = nn.functional.cross_entropy(net(points.cuda()), label.cuda())
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('numpy arrays a Dataset makes give the sample length, as the torch tensors made the same way do', async () => {
  const numpy = await estimateText(script('        pts = np.random.randn(3, POINTS).astype(np.float32)\n        return torch.from_numpy(pts), np.random.randint(10)'), 'numpy.py');
  const torchMade = await estimateText(script('        return torch.randn(3, POINTS), torch.randint(0, 10, ()).item()'), 'torch.py');
  assert.equal(torchMade.detected.seqLen?.value, 2048);
  assert.equal(numpy.detected.seqLen?.value, 2048);
  assert.equal(numpy.breakdown.activations, torchMade.breakdown.activations);
});
