// Two ops a hand-written forward calls that the trace did not follow: torchvision.ops.roi_align (a second-stage box
// head pooling fixed proposals) and torch.fft's one-dimensional transforms (an FFT long convolution). The fixtures
// are small scripts of their own; the figures are worked by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';
import type { LayerNetSpec } from '../../server/src/estimator/types';

const roiScript = `import torch
import torch.nn as nn
from torchvision.ops import roi_align


class BoxHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 32, 3, stride=2, padding=1)
        self.fc = nn.Linear(32 * 5 * 5, 64)

    def forward(self, x, rois):
        feats = self.stem(x)
        pooled = roi_align(feats, rois, output_size=(5, 5), spatial_scale=0.5, sampling_ratio=2, aligned=True)
        return self.fc(pooled.flatten(1))


model = BoxHead().cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(4):
    x = torch.randn(2, 3, 64, 64, device="cuda")
    rois = torch.rand(100, 5, device="cuda")
    loss = model(x, rois).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('roi_align: one pooled map per box, and forward is followed past it', async () => {
  const r = await estimateText(roiScript, 'roi-head.py');
  assert.equal(r.unresolved, undefined);
  const spec = r.config.rebuildAt!(64) as LayerNetSpec;
  assert.ok(!spec.forwardUntraced, 'forward() is followed');
  assert.ok(!(spec.unmodelledOps ?? []).some((op) => op.includes('roi_align')), 'roi_align is modelled');
  // roi_align keeps only the boxes (the step's input), not the stem's map; the linear keeps its input, the boxes'
  // pooled maps (32 x 5 x 5 each), one per row of the output (64 wide).
  assert.ok(spec.outputElementsPerSample > 0);
  assert.equal(spec.savedElementsPerSample / (32 * 5 * 5), spec.outputElementsPerSample / 64);
});

const fftScript = `import torch
import torch.nn as nn


class FFTConv(nn.Module):
    def __init__(self, h, length):
        super().__init__()
        self.kernel = nn.Parameter(torch.randn(h, length))
        self.inp = nn.Conv1d(h, h, 1)
        self.out = nn.Conv1d(h, h, 1)

    def forward(self, x):
        u = self.inp(x)
        L = u.size(-1)
        k_f = torch.fft.rfft(self.kernel, n=2 * L)
        u_f = torch.fft.rfft(u, n=2 * L)
        y = torch.fft.irfft(u_f * k_f, n=2 * L)[..., :L]
        return self.out(y)


model = FFTConv(16, 1024).cuda()
opt = torch.optim.Adam(model.parameters())
for step in range(4):
    u = torch.randn(4, 16, 1024, device="cuda")
    loss = model(u).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('an FFT long convolution: complex spectra of n // 2 + 1 bins at 8 bytes, the real inverse of n', async () => {
  const r = await estimateText(fftScript, 'fftconv.py');
  assert.equal(r.unresolved, undefined);
  const spec = r.config.rebuildAt!(1024) as LayerNetSpec;
  assert.ok(!spec.forwardUntraced, 'forward() is followed');
  assert.ok(!(spec.unmodelledOps ?? []).some((op) => op.includes('fft')), 'the transforms are modelled');
  // Kept, for one sample of 16 x 1024: each transform's input padded to n = 2048 (the kernel's and u's, 16 x 2048
  // floats each); the two spectra the product keeps, 16 x 1025 complex (two floats each); the inverse's 16 x 2048
  // output, which the output convolution keeps through the slice of it.
  assert.equal(spec.savedElementsPerSample, 3 * 16 * 2048 + 2 * 2 * 16 * 1025);
  assert.equal(spec.outputElementsPerSample, 16 * 1024);
});

const complexParameterScript = `import math
import torch
import torch.nn as nn


class DiagonalKernel(nn.Module):
    def __init__(self, h, n):
        super().__init__()
        c = torch.randn(h, n, dtype=torch.cfloat)
        self.c = nn.Parameter(torch.view_as_real(c))
        self.a_imag = nn.Parameter(torch.arange(n).float().repeat(h, 1))
        self.proj = nn.Linear(h, h)

    def forward(self, x):
        c = torch.view_as_complex(self.c)
        return self.proj(x) * (c.real.sum() + self.a_imag.sum())


model = DiagonalKernel(64, 16).cuda()
opt = torch.optim.Adam(model.parameters())
for step in range(4):
    x = torch.randn(8, 64, device="cuda")
    loss = model(x).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('parameters made complex and viewed as real pairs, and made by a cast of a range, are counted by their shape', async () => {
  const r = await estimateText(complexParameterScript, 'complex-parameters.py');
  // view_as_real of (64, 16) complex: (64, 16, 2); the range cast and repeated: (64, 16); the linear 64 x 64 + 64.
  assert.equal(r.detected.parameters, 64 * 16 * 2 + 64 * 16 + 64 * 64 + 64);
});
