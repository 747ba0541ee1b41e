// Boolean indexing (`scores.permute(0, 2, 3, 1)[pos]` with pos a (B, H, W) mask, as dense detectors pick their
// positive positions): a mask over k axes selects along one axis, at most every position it covers. Read as an
// integer index, its (B, H, W) would be put in front of every axis it covers again, a tensor (H x W) times too large
// in the step's loss. The fixtures are small scripts of their own; the figures are worked by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';
import type { LayerNetSpec } from '../../server/src/estimator/types';

const model = `import torch
import torch.nn as nn


class Dense(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, padding=1)
        self.cls = nn.Conv2d(16, 10, 1)
        self.box = nn.Conv2d(16, 4, 1)

    def forward(self, x):
        feat = self.stem(x)
        return [(self.cls(feat), self.box(feat))]

`;

const step = (mask: string): string => `${model}
def masked_loss(outputs):
    total = 0.0
    for cls, box in outputs:
        B, _, H, W = box.shape
        scores = torch.rand(B, H, W, device=box.device)
        pos = ${mask}
        picked = cls.permute(0, 2, 3, 1)[pos]
        total = total + picked.float().exp().mean() + box.permute(0, 2, 3, 1)[pos].abs().mean()
    return total


net = Dense().cuda()
opt = torch.optim.SGD(net.parameters(), lr=0.01)
for it in range(4):
    img = torch.randn(4, 3, 32, 32, device="cuda")
    outs = net(img)
    loss = masked_loss(outs)
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

/** What the step's loss keeps, per sample: exp's fp32 output over the selected class scores, abs's input (the selected boxes). */
const positions = 32 * 32;
const keptFp32 = 10 * positions;
const kept = keptFp32 + 4 * positions;

for (const [label, mask] of [['a comparison', 'scores < 0.05'], ['.bool()', '(scores * 20).long().bool()'], ['masks combined by &', '(scores < 0.05) & (scores > 0.01)']]) {
  test(`a (B, H, W) mask made by ${label} indexes (B, H, W, C) scores: one axis of at most B x H x W positions`, async () => {
    const r = await estimateText(step(mask), 'masked-loss.py');
    assert.equal(r.unresolved, undefined);
    const spec = r.config.rebuildAt!(32) as LayerNetSpec;
    assert.ok(!spec.forwardUntraced, 'forward() is followed');
    assert.equal(spec.stepKeptFp32ElementsPerSample, keptFp32);
    assert.equal(spec.stepKeptElementsPerSample, kept);
  });
}

test('an integer index tensor still puts its own axes in front (a lookup by ids, not a selection)', async () => {
  const r = await estimateText(step('(scores * 2).long()'), 'integer-index-loss.py');
  const spec = r.config.rebuildAt!(32) as LayerNetSpec;
  // cls.permute(...)[idx]: idx (1, 32, 32) over the first axis of (1, 32, 32, 10): (1, 32, 32, 32, 32, 10).
  assert.equal(spec.stepKeptFp32ElementsPerSample, positions * positions * 10);
});
