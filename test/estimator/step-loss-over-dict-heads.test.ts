// A loss the step computes, in functions of its own, over the heads a model returns as a dict (a CenterNet-style
// heatmap focal loss), after the forward's `with torch.autocast(...)` block: what that loss keeps for backward is
// counted, in fp32 where it casts the logits with `.float()`. The fixture is a small script of its own; the figures
// are worked by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';
import type { LayerNetSpec } from '../../server/src/estimator/types';

const script = `import torch
import torch.nn as nn


class Heads(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, padding=1)
        self.heads = nn.ModuleDict({"hm": nn.Conv2d(16, 10, 1), "wh": nn.Conv2d(16, 2, 1)})

    def forward(self, x):
        feat = self.stem(x)
        return {name: head(feat) for name, head in self.heads.items()}


def heatmap_loss(logits):
    pred = torch.sigmoid(logits.float())
    return -(torch.log(pred) * (1 - pred) ** 2).mean()


model = Heads().cuda()
opt = torch.optim.Adam(model.parameters())
for step in range(4):
    img = torch.randn(4, 3, 32, 32, device="cuda")
    with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
        out = model(img)
    loss = heatmap_loss(out["hm"]) + out["wh"].abs().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('a loss over a dict of heads after the autocast block: what it keeps is counted, in fp32 after .float()', async () => {
  const r = await estimateText(script, 'dict-heads-loss.py');
  assert.equal(r.unresolved, undefined);
  const spec = r.config.rebuildAt!(32) as LayerNetSpec;
  assert.ok(!spec.forwardUntraced, 'forward() is followed');
  const heatmap = 10 * 32 * 32;
  // The heatmap loss keeps, each of the heatmap's size in fp32: the sigmoid's output (which log reads too), the
  // log's output and (1 - pred) which the power reads, and the power's output (the product reads both factors).
  // The size head's abs keeps its input, the bf16 head output itself (2 x 32 x 32).
  assert.equal(spec.stepKeptFp32ElementsPerSample, 4 * heatmap);
  assert.equal(spec.stepKeptElementsPerSample, 4 * heatmap + 2 * 32 * 32);
});
