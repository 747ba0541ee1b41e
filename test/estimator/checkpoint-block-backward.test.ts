// A checkpointed block is recomputed in backward and then runs its own backward: the recompute costs what that
// backward holds at once, not only what the block keeps. A block of running sums over outer products (a linear
// attention written with cumsum) keeps about one of them, but cumsum's backward (a reversed running sum,
// `grad.flip(d).cumsum(d).flip(d)`) holds the gradient and three buffers of its size at once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';

const script = (autocast: boolean, { BATCH, LENGTH, WIDTH }: Size) => `import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint

class PrefixMemory(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.keys = nn.Linear(width, width)
        self.values = nn.Linear(width, width)
        self.out = nn.Linear(width, width)

    def forward(self, x):
        k = torch.sigmoid(self.keys(x))
        v = self.values(x)
        memory = torch.einsum("bld,ble->blde", k, v).cumsum(dim=1)
        read = torch.einsum("bld,blde->ble", k, memory)
        return x + self.out(read)

class Net(nn.Module):
    def __init__(self, width, depth):
        super().__init__()
        self.blocks = nn.ModuleList([PrefixMemory(width) for _ in range(depth)])

    def forward(self, x):
        for block in self.blocks:
            x = checkpoint(block, x, use_reentrant=False)
        return x

net = Net(${WIDTH}, 4).cuda()
opt = torch.optim.AdamW(net.parameters(), lr=1e-3)
for step in range(5):
    x = torch.randn(${BATCH}, ${LENGTH}, ${WIDTH}, device="cuda")
    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=${autocast ? 'True' : 'False'}):
        loss = net(x).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
`;

interface Size { BATCH: number; LENGTH: number; WIDTH: number }

/**
 * The same network measured on an H200 (test/gpu/estimator/probe_ckpt9.py, results/probe_ckpt9.jsonl): the step's
 * peak over weights, gradients and AdamW states, in running-sum tensors (batch, length, width, width) of fp32.
 * cumsum's output is fp32 under autocast, but its backward casts the gradient to the bf16 input's dtype first:
 * the fp32 gradient, its bf16 copy and three bf16 buffers, 3 fp32 tensors' worth where fp32 holds 4.
 */
const MEASURED: Array<{ size: Size; fp32: number; bf16: number }> = [
  { size: { BATCH: 8, LENGTH: 1024, WIDTH: 128 }, fp32: 4.128, bf16: 3.057 },
  { size: { BATCH: 4, LENGTH: 512, WIDTH: 256 }, fp32: 4.026, bf16: 3.024 },
];

for (const { size, ...measured } of MEASURED) {
  for (const autocast of [false, true]) {
    test(`a recomputed block of running sums holds cumsum's backward (${autocast ? 'bf16 autocast' : 'fp32'}, width ${size.WIDTH})`, async () => {
      const result = await estimateText(script(autocast, size), autocast ? 'prefix_memory_amp.py' : 'prefix_memory.py');
      assert.equal(result.config.checkpointing, true);
      const persistent = result.breakdown.weights + result.breakdown.gradients + result.breakdown.optimizerStates;
      assert.equal(result.peakPhase, 'backward');
      const memoryBytes = size.BATCH * size.LENGTH * size.WIDTH * size.WIDTH * 4;
      const memories = (result.peakAllocated - persistent) / memoryBytes;
      const expected = autocast ? measured.bf16 : measured.fp32;
      // Within 5% of the measurement.
      assert.ok(Math.abs(memories / expected - 1) <= 0.05, `${memories} vs ${expected}`);
    });
  }
}
