// A stem before checkpointed blocks that makes the net's largest tensor (a wide first layer): its backward runs
// after every block's recompute, when only its own tensors are left, so its gradient pair is not stacked on a
// recomputed block. Figures are worked by hand from the fixture's layers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';

const script = (ckpt: string) => `import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc1 = nn.Linear(dim, 2 * dim)
        self.fc2 = nn.Linear(2 * dim, dim)

    def forward(self, x):
        return x + self.fc2(torch.relu(self.fc1(x)))


class Stem(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.wide = nn.Linear(32, 8192)
        self.narrow = nn.Linear(8192, dim)

    def forward(self, x):
        return self.narrow(torch.relu(self.wide(x)))


class Net(nn.Module):
    def __init__(self, dim=64, depth=6, use_ckpt=True):
        super().__init__()
        self.use_ckpt = use_ckpt
        self.stem = Stem(dim)
        self.blocks = nn.ModuleList([Block(dim) for _ in range(depth)])
        self.head = nn.Linear(dim, 10)

    def forward(self, x):
        x = self.stem(x)
        for blk in self.blocks:
            x = checkpoint(blk, x, use_reentrant=False) if self.use_ckpt else blk(x)
        return self.head(x)


model = Net(use_ckpt=${ckpt}).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(512, 32, device="cuda")
    loss = nn.functional.cross_entropy(model(x), torch.randint(0, 10, (512,), device="cuda"))
    opt.zero_grad()
    loss.backward()
    opt.step()
`;
test('checkpointing after a wide stem: the stem\'s gradient pair comes over its own tensors, not over a recompute', async () => {
  const cut = await estimateText(script('True'), 'ckpt_stem.py');
  const plain = await estimateText(script('False'), 'ckpt_stem_plain.py');
  assert.equal(cut.peakPhase, 'backward');
  // The stem keeps ReLU's 8192-wide output; its backward makes the gradients of that and of the wide layer's output
  // (2 x 8192) beside it: 512 rows x (8192 + 16384) fp32 elements.
  assert.equal(cut.breakdown.activations, 512 * (8192 + 16384) * 4);
  // Checkpointing the small blocks cannot raise the peak the stem sets.
  assert.ok(cut.peakAllocated <= plain.peakAllocated, `${cut.peakAllocated} checkpointed, ${plain.peakAllocated} without`);
});
