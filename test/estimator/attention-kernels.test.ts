// Attention as PyTorch runs it: which weights nn.MultiheadAttention has when its keys have their own width, and
// which SDPA kernel runs (and so what it keeps for backward) for the query's rank and dtype.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';

// Learned queries attending over raw 3-D points: keys and values of width 3 (kdim / vdim), projected by 64 x 3 weights.
const pointPooling = (attention: string): string => `import torch
import torch.nn as nn
import torch.nn.functional as F

class PointPool(nn.Module):
    def __init__(self, dim=64, heads=4, seeds=16):
        super().__init__()
        self.seeds = nn.Parameter(torch.randn(1, seeds, dim))
        self.attn = ${attention}
        self.head = nn.Linear(dim, 10)

    def forward(self, points):
        q = self.seeds.expand(points.size(0), -1, -1)
        out, _ = self.attn(q, points, points, need_weights=False)
        return self.head(out.mean(dim=1))

model = PointPool().cuda()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(3):
    points = torch.randn(32, 1024, 3, device="cuda")
    y = torch.randint(0, 10, (32,), device="cuda")
    loss = F.cross_entropy(model(points), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('nn.MultiheadAttention with kdim / vdim projects keys and values with E x kdim weights', async () => {
  const result = await estimateText(pointPooling('nn.MultiheadAttention(dim, heads, kdim=3, vdim=3, batch_first=True)'), '/tmp/point_pool.py');
  // seeds 16 x 64; q and out projections 2 x 64 x 64, k and v 2 x 64 x 3, biases 4 x 64; the head 64 x 10 + 10.
  assert.equal(result.detected.parameters, 16 * 64 + 2 * 64 * 64 + 2 * 64 * 3 + 4 * 64 + 64 * 10 + 10);
  const keyed = await estimateText(pointPooling('nn.MultiheadAttention(dim, heads, 0.0, True, True, False, 3, 3, batch_first=True)'), '/tmp/point_pool_positional.py');
  // Positional: add_bias_kv (a learned key and value, 64 each) besides kdim and vdim.
  assert.equal(keyed.detected.parameters, (result.detected.parameters ?? 0) + 2 * 64);
});
