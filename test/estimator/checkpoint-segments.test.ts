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
  assert.ok(two.breakdown.activations > 2 * eight.breakdown.activations, `${two.breakdown.activations} vs ${eight.breakdown.activations}`);
});
