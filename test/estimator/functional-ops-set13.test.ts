// Operations a forward() calls as functions that the trace did not model (issue #13, set 13): a convolution with a
// fixed filter bank given as a tensor (F.conv2d, depthwise with groups), unrolled for a number of steps drawn once per
// batch; GLU, clamp, sort and norm; nn.Hardtanh. Each keeps what PyTorch's autograd formula for it keeps. The
// fixtures are small scripts of their own; the figures are worked by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';
import { parsePython } from '../../server/src/engine/parser';
import { ProgramModel } from '../../server/src/engine/program/interpreter';
import { madeTensorShape, sizedOrListedShape, type CallResultValue, type NumberValue } from '../../server/src/engine/program/values';
import type { LayerNetSpec } from '../../server/src/estimator/types';

test('a filter bank built from literal matrices (scaled, transposed, stacked, repeated, given an axis) has its shape; one integer drawn by torch is its largest value', async () => {
  const tree = await parsePython(`import torch
C = 4
edge = torch.tensor([[1.0, 0.0, -1.0], [2.0, 0.0, -2.0], [1.0, 0.0, -1.0]]) / 4.0
edge_t = edge.T
bank = torch.stack([edge, edge.T])
filters = bank.repeat(C, 1, 1).unsqueeze(1)
wide = torch.zeros(2, 5).T
steps = int(torch.randint(12, 20, (1,)))
`);
  if (!tree) throw new Error('parse failed');
  try {
    const model = new ProgramModel(tree.rootNode);
    const value = (name: string) => model.assigned.get(name)?.[0];
    const shape = (name: string) => madeTensorShape(value(name) as CallResultValue);
    // A matrix of literals divided by a number is that matrix: sized from its lists, not from sized parts.
    assert.equal(shape('edge'), undefined);
    assert.deepEqual(sizedOrListedShape(value('edge') as CallResultValue), [3, 3]);
    assert.deepEqual(shape('edge_t'), [3, 3]);
    assert.deepEqual(shape('bank'), [2, 3, 3]);
    assert.deepEqual(shape('filters'), [8, 1, 3, 3]);
    assert.deepEqual(shape('wide'), [5, 2]);
    const steps = value('steps') as NumberValue;
    assert.equal(steps.kind, 'number');
    // randint's high is excluded: drawn from 12 to 19, read as its largest.
    assert.equal(steps.value, 19);
    assert.equal(steps.least, 12);
  } finally {
    tree.delete();
  }
});

const diffusionScript = `import torch
import torch.nn as nn
import torch.nn.functional as F

CHANNELS = 4


class Diffuse(nn.Module):
    def __init__(self, channels=CHANNELS):
        super().__init__()
        self.channels = channels
        lap = torch.tensor([[0.0, 1.0, 0.0], [1.0, -4.0, 1.0], [0.0, 1.0, 0.0]]) / 4.0
        self.register_buffer("kernel", torch.stack([lap, lap.T]).repeat(channels, 1, 1).unsqueeze(1))
        self.mix = nn.Conv2d(2 * channels, channels, 1)

    def forward(self, x, steps):
        for _ in range(steps):
            y = F.conv2d(x, self.kernel, padding=1, groups=self.channels)
            x = x + self.mix(y)
        return x


model = Diffuse().cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for it in range(3):
    x = torch.randn(8, CHANNELS, 16, 16, device="cuda")
    n = int(torch.randint(3, 6, (1,)))
    out = model(x, n)
    loss = out.square().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('a fixed depthwise filter given to F.conv2d, unrolled for the most steps the draw allows, keeps every step\'s input and output', async () => {
  const r = await estimateText(diffusionScript, 'diffuse-steps.py');
  assert.equal(r.unresolved, undefined);
  const spec = r.config.rebuildAt!(8) as LayerNetSpec;
  assert.ok(!spec.forwardUntraced, 'forward() is followed');
  assert.deepEqual(spec.unmodelledOps ?? [], []);
  // Per sample, for each of 5 steps (randint(3, 6) draws at most 5): the filtered map (2C x 16 x 16 = 2048, kept by
  // the 1x1 convolution) and, from the second step on, the step's input (C x 16 x 16 = 1024, kept by F.conv2d;
  // the first step's is the data). The buffer is the module's, not the activations'.
  assert.equal(spec.savedElementsPerSample, 5 * 2048 + 4 * 1024);
  // The estimate says which count it took, and where the draw is.
  const line = diffusionScript.split('\n').findIndex((l) => l.includes('torch.randint(3, 6')) + 1;
  assert.ok(r.assumptions.some((a) => a.includes(`drawn from 3 to 5 (line ${line})`) && a.includes('counted at 5')), r.assumptions.join('\n'));
});

const gateScript = `import torch
import torch.nn as nn
import torch.nn.functional as F


class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(32, 128)
        self.out = nn.Linear(64, 16)

    def forward(self, x):
        h = F.glu(self.inp(x), dim=-1)
        h = torch.clamp(self.out(h), min=-1.0, max=1.0)
        ranked, order = torch.sort(h, dim=-1, descending=True)
        return ranked.norm(dim=-1)


model = Gate().cuda()
opt = torch.optim.Adam(model.parameters())
for step in range(3):
    x = torch.randn(64, 32, device="cuda")
    loss = model(x).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('GLU, clamp, sort and norm keep what their backward reads', async () => {
  const r = await estimateText(gateScript, 'gate-ops.py');
  assert.equal(r.unresolved, undefined);
  const spec = r.config.rebuildAt!(64) as LayerNetSpec;
  assert.ok(!spec.forwardUntraced, 'forward() is followed');
  assert.deepEqual(spec.unmodelledOps ?? [], []);
  // Per sample: GLU its input (128) and makes 64, which the second linear keeps (64); clamp its input (16); norm its
  // input, the sorted values (16), and the norm (1).
  assert.equal(spec.savedElementsPerSample, 128 + 64 + 16 + 16 + 1);
  // sort keeps its int64 indices (16 a sample).
  assert.ok(spec.fixedBytesPerSample >= 16 * 8, `fixed bytes ${spec.fixedBytesPerSample}`);
});

const hardtanhScript = `import torch
import torch.nn as nn


class Clipped(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(32, 64), nn.Hardtanh(0, 20), nn.Linear(64, 8))

    def forward(self, x):
        return self.body(x)


model = Clipped().cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(3):
    x = torch.randn(32, 32, device="cuda")
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('nn.Hardtanh keeps its input as ReLU6 (the same op) does', async () => {
  const r = await estimateText(hardtanhScript, 'hardtanh-layer.py');
  assert.equal(r.unresolved, undefined);
  assert.ok(!r.assumptions.some((a) => a.includes('Hardtanh')), r.assumptions.join('\n'));
  const spec = r.config.rebuildAt!(32) as LayerNetSpec;
  assert.deepEqual(spec.unmodelledOps ?? [], []);
  // Per sample: Hardtanh's input (64) and its output, which the last linear keeps (64).
  assert.equal(spec.savedElementsPerSample, 64 + 64);
});
