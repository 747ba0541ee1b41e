// A power (`h ** 2`, `torch.pow(h, 2)`, `h.pow(2)`) is on autocast's fp32 list: given a half tensor under autocast
// it casts it to fp32, keeps that copy for backward and makes an fp32 result (an attentive statistics pooling's
// second moment, `torch.sum((x ** 2) * w, dim=2)`). Measured on the H200 with such a pooling under fp16 autocast
// (test/gpu/estimator/results/probe_under12.jsonl, asp_b64: 589 MiB kept, of which the power's fp32 copy and its
// fp32 result). The fixture is a small script of its own; the figures are worked by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';
import type { LayerNetSpec } from '../../server/src/estimator/types';

const script = (power: string): string => `import torch
import torch.nn as nn


class SecondMoment(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(8, 8, 1)

    def forward(self, x):
        h = self.conv(x)
        return ${power}.mean(dim=2)


model = SecondMoment().cuda()
opt = torch.optim.Adam(model.parameters())
for step in range(4):
    x = torch.randn(4, 8, 100, device="cuda")
    with torch.autocast("cuda", dtype=torch.float16):
        loss = model(x).float().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

for (const power of ['(h ** 2)', 'torch.pow(h, 2)', 'h.pow(2)']) {
  test(`${power} under autocast keeps an fp32 copy of its half base`, async () => {
    const r = await estimateText(script(power), 'second-moment.py');
    assert.equal(r.unresolved, undefined);
    const spec = r.config.rebuildAt!(100) as LayerNetSpec;
    assert.ok(!spec.forwardUntraced, 'forward() is followed');
    assert.ok(!(spec.unmodelledOps ?? []).some((op) => op.includes('pow')), 'the power is modelled');
    // Per sample: the power's fp32 copy of the convolution's half output (8 x 100 at 4 bytes), not that output
    // itself at 2 (the convolution's copy of the step's input is the input's, counted apart).
    assert.equal(spec.autocastSavedBytesPerSample, 8 * 100 * 4);
  });
}
