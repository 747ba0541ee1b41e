// Forwards written as Python loops and the tensors they build before forward: a parameter made from arange and
// repeat (a state-space model's A matrix), a matmul that broadcasts a parameter over the batch (capsule routing),
// and what a no-grad decoding loop holds at once. Each fixture is a small script of its own; figures are worked by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';
import type { LayerNetSpec } from '../../server/src/estimator/types';

const scanScript = `import torch
import torch.nn as nn


class Scan(nn.Module):
    def __init__(self, d=32, n=4):
        super().__init__()
        self.proj = nn.Linear(d, d)
        A = torch.arange(1, n + 1, dtype=torch.float32).repeat(d, 1)
        self.A_log = nn.Parameter(torch.log(A))

    def forward(self, x):
        delta = self.proj(x)
        A = -torch.exp(self.A_log)
        dA = torch.exp(delta.unsqueeze(-1) * A)
        return dA.sum(-1)


model = Scan().cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(4):
    x = torch.randn(8, 16, 32, device="cuda")
    loss = model(x).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('parameters made from arange().repeat() have their shape: counted, and broadcast in forward', async () => {
  const r = await estimateText(scanScript, 'scan.py');
  const spec = r.config.rebuildAt!(16) as LayerNetSpec;
  // The linear (32 x 32 + 32) and A_log: arange(1, 5) repeated 32 times over a new leading axis, 32 x 4.
  assert.equal(spec.parameters, 32 * 32 + 32 + 32 * 4);
  // Kept: exp(A_log)'s output and its negation (32 x 4 each), the product's other operand delta (16 x 32), and
  // the outer exp's output (16 x 32 x 4), broadcast over A's 4 columns.
  assert.equal(spec.savedElementsPerSample, 2 * 32 * 4 + 16 * 32 + 16 * 32 * 4);
});

const routeScript = `import torch
import torch.nn as nn


class Route(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(12, 12)
        self.W = nn.Parameter(0.01 * torch.randn(1, 6, 4, 3, 2))

    def forward(self, x):
        u = self.inp(x).view(x.size(0), 6, 1, 2, 1)
        return torch.matmul(self.W, u).squeeze(-1)


model = Route().cuda()
opt = torch.optim.Adam(model.parameters())
for step in range(4):
    x = torch.randn(8, 12, device="cuda")
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('a matmul that broadcasts a parameter over the batch keeps its copy at the full batch, and backward a gradient as large', async () => {
  const r = await estimateText(routeScript, 'route.py');
  const spec = r.config.rebuildAt!(12) as LayerNetSpec;
  // bmm runs on both operands expanded to the batch (1 x 6 x 4 per sample): W's 3 x 2 matrices once per sample
  // (6 x 4 x 3 x 2) and u's 2 x 1 columns once per output capsule (6 x 4 x 2); the input is the data.
  assert.equal(spec.savedElementsPerSample, 6 * 4 * 3 * 2 + 6 * 4 * 2);
  // Backward of bmm: the output's gradient (6 x 4 x 3) and the expanded copies' gradients beside what is kept.
  assert.equal(spec.backwardPeakElementsPerSample, 2 * (6 * 4 * 3 * 2 + 6 * 4 * 2) + 6 * 4 * 3);
  // That point is bmm's, with no convolution's workspace beside it.
  assert.equal(spec.backwardPeakWithoutConvolution, true);
});

const refineScript = `import torch
import torch.nn as nn
import torch.nn.functional as F


class Refine(nn.Module):
    def __init__(self):
        super().__init__()
        self.feat = nn.Conv2d(3, 8, 3, padding=1)
        self.head = nn.Conv2d(8, 2, 3, padding=1)

    def forward(self, img, iters=4):
        f = self.feat(img)
        grid = torch.zeros(img.size(0), 4, 4, 2, device=img.device)
        preds = []
        for _ in range(iters):
            sampled = F.grid_sample(f, grid, align_corners=True)
            preds.append(self.head(sampled))
        return preds


model = Refine().cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(4):
    img = torch.randn(8, 3, 16, 16, device="cuda")
    preds = model(img)
    loss = 0.0
    for p in preds:
        loss = loss + p.abs().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('a refinement loop: grid_sample samples at the grid points, every iteration keeps its own tensors, and the list it returns is alive whole', async () => {
  const r = await estimateText(refineScript, 'refine.py');
  const spec = r.config.rebuildAt!(16) as LayerNetSpec;
  // grid_sample keeps the features (8 x 16 x 16) and the grid (4 x 4 x 2), the same tensors each iteration; each of
  // the 4 iterations' head keeps its own sampled input (8 x 4 x 4).
  assert.equal(spec.savedElementsPerSample, 8 * 16 * 16 + 4 * 4 * 2 + 4 * 8 * 4 * 4);
  // The 4 predictions (2 x 4 x 4 each) the loss reads.
  assert.equal(spec.outputElementsPerSample, 4 * 2 * 4 * 4);
});

const encoderScript = `import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(100, 32)
        layer = nn.TransformerEncoderLayer(32, 4, 128, batch_first=True, norm_first=True)
        self.enc = nn.TransformerEncoder(layer, 2)

    def forward(self, ids):
        return self.enc(self.emb(ids))


model = Encoder().cuda().eval()
with torch.no_grad():
    for _ in range(3):
        ids = torch.randint(0, 100, (8, 16), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model(ids)
`;

test('a no-grad transformer stack holds, at a layer\'s feed-forward block, its input, the stream, the norm\'s output and the hidden twice', async () => {
  const r = await estimateText(encoderScript, 'encoder.py');
  const spec = r.config.rebuildAt!(16) as LayerNetSpec;
  // The second layer, 16 tokens of width 32 and hidden 128: the stack's input (its caller holds it), the layer's
  // input, the stream after attention, norm2's output (32 wide each) and linear1's and ReLU's outputs (128 wide).
  assert.equal(spec.inferenceLiveElementsPerSample, 16 * (4 * 32 + 2 * 128));
  // Under autocast the embedding's stream and layer_norm's output are fp32, the hidden activations bf16.
  assert.equal(spec.autocastInferenceLiveBytesPerSample, 16 * (4 * 32 * 4 + 2 * 128 * 2));
});

const longScanScript = `import torch
import torch.nn as nn


class Recurrence(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.proj = nn.Linear(d, d)

    def forward(self, x):
        u = self.proj(x)
        h = torch.zeros(x.size(0), x.size(2), device=x.device)
        ys = []
        for t in range(x.size(1)):
            h = torch.tanh(h + u[:, t])
            ys.append(h)
        return torch.stack(ys, 1)


model = Recurrence().cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(4):
    x = torch.randn(4, 600, 8, device="cuda")
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('a forward loop longer than the unrolling bound keeps every time step\'s tensors, and its list has every step', async () => {
  const r = await estimateText(longScanScript, 'long_scan.py');
  const spec = r.config.rebuildAt!(600) as LayerNetSpec;
  // 600 time steps (past the 512 passes the trace runs): each tanh keeps its output (8 a step); the linear's input
  // is the data.
  assert.equal(spec.savedElementsPerSample, 600 * 8);
  // The stacked states: all 600 of them.
  assert.equal(spec.outputElementsPerSample, 600 * 8);
});
