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

/** A two-level 3-D U-Net: InstanceNorm3d, MaxPool3d down, ConvTranspose3d up, a skip concatenated. */
const volumeUNet = `
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

class Volumes(Dataset):
    def __len__(self):
        return 8
    def __getitem__(self, i):
        return torch.randn(1, 64, 64, 64), torch.randint(0, 3, (64, 64, 64))

def block(i, o):
    return nn.Sequential(nn.Conv3d(i, o, 3, padding=1, bias=False), nn.InstanceNorm3d(o, affine=True), nn.LeakyReLU(0.01, inplace=True))

class UNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.down = block(1, 16)
        self.pool = nn.MaxPool3d(2)
        self.mid = block(16, 32)
        self.up = nn.ConvTranspose3d(32, 16, kernel_size=2, stride=2)
        self.dec = block(32, 16)
        self.head = nn.Conv3d(16, 3, 1)
    def forward(self, x):
        skip = self.down(x)
        x = self.up(self.mid(self.pool(skip)))
        return self.head(self.dec(torch.cat([x, skip], dim=1)))

net = UNet().cuda()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for vol, seg in DataLoader(Volumes(), batch_size=2):
    loss = nn.functional.cross_entropy(net(vol.cuda()), seg.cuda())
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('3-D pooling, transposed convolution and instance norm are modelled: parameters counted, the volume halved and doubled back', async () => {
  const result = await estimateText(volumeUNet, 'unet3d.py');
  // Convolutions 1*16*27 + 16*32*27 + 32*16*27 + 16*3 + 3, the transposed one 32*16*8 + 16, three affine
  // InstanceNorm3d 2*(16 + 32 + 16).
  assert.equal(result.detected.parameters, 432 + 13824 + 13824 + 51 + 4112 + 128);
  assert.ok(!result.assumptions.some((a) => /not modelled/.test(a)), result.assumptions.join('\n'));
  // Per sample, the full-resolution level keeps about 6 tensors of 16 x 64^3 (conv inputs, norm inputs, the pool's
  // input and indices, the concatenation): well under 20 of them, which a pool that kept the resolution would reach.
  const perSampleFullLevel = 16 * 64 ** 3 * 4;
  assert.ok(result.breakdown.activations < 2 * 12 * perSampleFullLevel, `${result.breakdown.activations}`);
  assert.ok(result.breakdown.activations > 2 * 3 * perSampleFullLevel * 0.5, `${result.breakdown.activations}`);
});
