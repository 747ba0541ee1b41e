// A sparse adjacency built on the GPU stays there through every step (COO: int64 indices 2 x nnz and the values),
// and torch.sparse.mm's backward takes two buffers of its dense operand's size beside the gradients (measured on the
// H200: test/gpu/estimator/results/probe_packed.json).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';

const sage = (device: string, aggregate: string) => `import torch
import torch.nn as nn
import torch.nn.functional as F

NODES = 80000
EDGES = 1200000

def adjacency(n, e):
    rows = torch.randint(0, n, (e,)${device})
    cols = torch.randint(0, n, (e,)${device})
    index = torch.stack([torch.cat([rows, cols]), torch.cat([cols, rows])])
    return torch.sparse_coo_tensor(index, torch.full((2 * e,), 0.05${device}), (n, n)).coalesce()

class Sage(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = nn.Linear(128, 256)
        self.outer = nn.Linear(256, 8)

    def forward(self, x, adj):
        h = F.relu(self.inner(x))
        return self.outer(${aggregate})

adj = adjacency(NODES, EDGES).cuda()
x = torch.randn(NODES, 128, device="cuda")
y = torch.randint(0, 8, (NODES,), device="cuda")
model = Sage().cuda()
opt = torch.optim.Adam(model.parameters(), lr=0.01)
for epoch in range(3):
    loss = F.cross_entropy(model(x, adj), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('a COO adjacency built on the GPU is resident: 2 x nnz int64 indices and nnz fp32 values, said with its nonzeros', async () => {
  const [gpu, cpu] = await Promise.all([
    estimateText(sage(', device="cuda"', 'torch.sparse.mm(adj, h)'), 'sage_gpu.py'),
    estimateText(sage('', 'torch.sparse.mm(adj, h)').replace('adjacency(NODES, EDGES).cuda()', 'adjacency(NODES, EDGES)'), 'sage_cpu.py'),
  ]);
  const bytes = 2 * 1200000 * (16 + 4);
  assert.ok(gpu.assumptions.some((a) => a.startsWith('a sparse adjacency of 2.4M nonzeros (line 12)')), gpu.assumptions.join('\n'));
  assert.ok(!cpu.assumptions.some((a) => a.includes('sparse adjacency')), cpu.assumptions.join('\n'));
  assert.equal(gpu.peakAllocated - cpu.peakAllocated, bytes);
});

test("torch.sparse.mm's backward takes two buffers of the dense operand's size that a dense product does not", async () => {
  const [sparse, dense] = await Promise.all([
    estimateText(sage(', device="cuda"', 'torch.sparse.mm(adj, h)'), 'sparse.py'),
    estimateText(sage(', device="cuda"', 'torch.mm(adj, h)'), 'dense.py'),
  ]);
  const buffers = 2 * 80000 * 256 * 4;
  const more = sparse.peakAllocated - dense.peakAllocated;
  assert.ok(more >= 0.9 * buffers && more <= 1.1 * buffers, `sparse ${sparse.peakAllocated}, dense ${dense.peakAllocated}: ${more} more, expected about ${buffers}`);
});
