// torchvision.ops.deform_conv2d called in a hand-written module's forward (a DCNv2 head): the trace sizes its output
// from the weight and the offsets' grid, keeps what its backward reads, and takes its column buffer at backward. The
// fixture is a small script of its own; the figures are worked by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';
import type { LayerNetSpec } from '../../server/src/estimator/types';

const dcnScript = `import torch
import torch.nn as nn
from torchvision.ops import deform_conv2d


class Deform(nn.Module):
    def __init__(self, c_in, c_out, k=3):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(c_out, c_in, k, k))
        self.bias = nn.Parameter(torch.zeros(c_out))
        self.offset_mask = nn.Conv2d(c_in, 3 * k * k, k, 1, 1)

    def forward(self, x):
        out = self.offset_mask(x)
        o1, o2, m = torch.chunk(out, 3, dim=1)
        offset = torch.cat((o1, o2), dim=1)
        m = torch.sigmoid(m)
        return deform_conv2d(x, offset, self.weight, self.bias, stride=2, padding=1, mask=m)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, padding=1)
        self.dcn = Deform(16, 32)
        self.head = nn.Conv2d(32, 4, 1)

    def forward(self, x):
        return self.head(self.dcn(self.stem(x)))


model = Net().cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(4):
    x = torch.randn(8, 3, 32, 32, device="cuda")
    loss = model(x).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('deform_conv2d: its output has the weight\'s channels on the stride\'s grid, and forward is followed past it', async () => {
  const r = await estimateText(dcnScript, 'dcn.py');
  const spec = r.config.rebuildAt!(32) as LayerNetSpec;
  assert.ok(!spec.forwardUntraced, 'forward() is followed');
  assert.ok(!(spec.unmodelledOps ?? []).some((op) => op.includes('deform')), 'deform_conv2d is modelled');
  // The head keeps the deformable conv's output: 32 channels on a 16 x 16 grid (stride 2). Kept: the stem's input
  // is the step's (not counted); offset_mask keeps the stem output (16 x 32 x 32); sigmoid keeps its output
  // (9 x 32 x 32); deform_conv2d keeps its input (the stem output, already kept), the offsets (18 x 32 x 32) and the
  // mask (already kept); the head keeps 32 x 16 x 16.
  assert.equal(spec.savedElementsPerSample, 16 * 32 * 32 + 9 * 32 * 32 + 18 * 32 * 32 + 32 * 16 * 16);
  assert.equal(spec.outputElementsPerSample, 4 * 16 * 16);
});

const heldBackboneScript = `import torch
import torch.nn as nn
from torchvision.models import resnet18
from mylib import fancy_op


class Up(nn.Module):
    def __init__(self):
        super().__init__()
        r = resnet18(weights=None)
        self.backbone = nn.Sequential(*list(r.children())[:-2])
        self.up = nn.Sequential(
            nn.ConvTranspose2d(512, 128, 4, stride=2, padding=1), nn.ReLU(),
            nn.ConvTranspose2d(128, 64, 4, stride=2, padding=1), nn.ReLU(),
        )
        self.head = nn.Conv2d(64, 3, 1)

    def forward(self, x):
        return self.head(self.up(fancy_op(self.backbone(x))))


model = Up().cuda()
opt = torch.optim.Adam(model.parameters())
for step in range(4):
    x = torch.randn(16, 3, 256, 256, device="cuda")
    loss = model(x).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('a forward that cannot be followed through a held library backbone is unresolved, not walked without the backbone\'s stride', async () => {
  const r = await estimateText(heldBackboneScript, 'held-backbone.py');
  // The walk in build order would run the upsampling head on the 256 x 256 image itself (the backbone's stride of 32
  // left out): maps 1,024 times too large. Never a figure from it.
  assert.match(r.unresolved?.reason ?? '', /holds a library model/);
});
