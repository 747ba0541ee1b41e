import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';

/** A small clip classifier whose first 3-D convolution strides (or not) over height and width only. */
function clipScript(stride: string): string {
  return `
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

FRAMES, SIDE = 8, 96

class Clips(Dataset):
    def __len__(self):
        return 64
    def __getitem__(self, i):
        return torch.randn(3, FRAMES, SIDE, SIDE), 0

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv3d(3, 48, kernel_size=(3, 5, 5), stride=${stride}, padding=(1, 2, 2), bias=False)
        self.bn = nn.BatchNorm3d(48)
        self.act = nn.ReLU(inplace=True)
        self.pool = nn.AdaptiveAvgPool3d(1)
        self.fc = nn.Linear(48, 10)
    def forward(self, x):
        x = self.act(self.bn(self.stem(x)))
        return self.fc(self.pool(x).flatten(1))

net = Net().cuda()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for clip, label in DataLoader(Clips(), batch_size=16):
    loss = nn.functional.cross_entropy(net(clip.cuda()), label.cuda())
    opt.zero_grad()
    loss.backward()
    opt.step()
`;
}

test('a 3-D convolution reads kernel, stride and padding per dimension (frames x height x width), and a (C, T, H, W) clip gives the image size', async () => {
  const strided = await estimateText(clipScript('(1, 2, 2)'), 'clips_strided.py');
  const flat = await estimateText(clipScript('1'), 'clips_flat.py');
  assert.equal(strided.detected.imageSize?.value, 96);
  // Striding height and width by 2 quarters the stem's output, which BatchNorm and ReLU keep: the activations
  // fall by about 4 (the input clip, kept by the stem, is the same in both).
  const ratio = flat.breakdown.activations / strided.breakdown.activations;
  assert.ok(ratio > 2.5 && ratio < 4.2, `ratio ${ratio}`);
});
