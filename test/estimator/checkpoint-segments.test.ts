// checkpoint_sequential(net, segments, x) runs the last segment without checkpointing and recomputes the others one
// at a time: the segments the script gives decide how much a step keeps.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';

const script = (segments: string) => `import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint_sequential

SEGMENTS = ${segments}
layers = [nn.Linear(256, 2048), nn.ReLU()]
for _ in range(15):
    layers += [nn.Linear(2048, 2048), nn.ReLU()]
layers.append(nn.Linear(2048, 1))
net = nn.Sequential(*layers).cuda()
opt = torch.optim.SGD(net.parameters(), lr=0.01)
for step in range(10):
    x = torch.randn(4096, 256, device="cuda")
    out = checkpoint_sequential(net, SEGMENTS, x, use_reentrant=False)
    loss = out.pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('checkpoint_sequential keeps the last of the segments the script gives: two keep more than twice what eight do', async () => {
  const two = await estimateText(script('2'), 'two.py');
  const eight = await estimateText(script('8'), 'eight.py');
  assert.equal(two.config.checkpointSegmentCount, 2);
  assert.equal(eight.config.checkpointSegmentCount, 8);
  // 33 layers split as torch splits them: the last of 2 segments runs 17 of them normally, the last of 8 runs 5.
  assert.ok(two.breakdown.activations > eight.breakdown.activations, `${two.breakdown.activations} vs ${eight.breakdown.activations}`);
  // Eight segments keep the inputs of the seven checkpointed ones (4096 x 2048 fp32 each) until their backward: all
  // of them are alive while the last of them is recomputed.
  assert.ok(eight.breakdown.activations >= 7 * 4096 * 2048 * 4, `${eight.breakdown.activations}`);
});

/** A model whose own forward runs its blocks through checkpoint_sequential (or plainly, when `call` says so). */
const mixerScript = (call: string) => `import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint_sequential

class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(4 * dim, dim)
    def forward(self, x):
        return x + self.fc2(self.act(self.fc1(self.norm(x))))

class Net(nn.Module):
    def __init__(self, dim=512, depth=8):
        super().__init__()
        self.embed = nn.Linear(64, dim)
        self.blocks = nn.Sequential(*[Block(dim) for _ in range(depth)])
        self.head = nn.Linear(dim, 10)
    def forward(self, x):
        x = self.embed(x)
        x = ${call}
        return self.head(x.mean(dim=1))

net = Net().cuda()
opt = torch.optim.Adam(net.parameters())
for step in range(5):
    x = torch.randn(64, 256, 64, device="cuda")
    y = torch.randint(0, 10, (64,), device="cuda")
    loss = nn.functional.cross_entropy(net(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test("checkpoint_sequential called in a model's forward runs its blocks in the trace: one segment keeps what a plain forward does, four keep less", async () => {
  const plain = await estimateText(mixerScript('self.blocks(x)'), 'plain.py');
  const one = await estimateText(mixerScript('checkpoint_sequential(self.blocks, 1, x, use_reentrant=False)'), 'one.py');
  const four = await estimateText(mixerScript('checkpoint_sequential(self.blocks, 4, x, use_reentrant=False)'), 'four.py');
  assert.equal(four.config.checkpointSegmentCount, 4);
  // The eight blocks keep about 11 tensors of 256 x 512 each per sample: far above what the stem and head keep.
  const perBlock = 64 * 256 * 512 * 4 * 11;
  assert.ok(plain.breakdown.activations > 6 * perBlock, `${plain.breakdown.activations}`);
  assert.ok(Math.abs(one.breakdown.activations / plain.breakdown.activations - 1) < 0.15, `${one.breakdown.activations} vs ${plain.breakdown.activations}`);
  // Four segments of two: the last runs normally (2 blocks), the three others keep their input.
  assert.ok(four.breakdown.activations < 0.5 * plain.breakdown.activations, `${four.breakdown.activations} vs ${plain.breakdown.activations}`);
  assert.ok(four.breakdown.activations > 1.5 * perBlock, `${four.breakdown.activations}`);
});
