// A graph net that builds its edge list inside forward from a boolean mask (every pair of atoms but the self pairs,
// `a[a != b]` of a meshgrid) and repeats it per graph: indexing by a mask keeps its elements along one axis, so the
// repeat multiplies the pair count and the per-edge messages grow with the square of the atoms. Built by a function
// before the loop (with per-graph offsets from repeat_interleave), the edge list is the whole step's: the trace runs
// at the step's batch, the samples' rows folded into one axis.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';

const pairNet = (atoms: number): string => `import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

ATOMS = ${atoms}
GRAPHS = 32


class Atoms(Dataset):
    def __len__(self):
        return 512

    def __getitem__(self, i):
        return torch.randn(ATOMS, 64), torch.randn(())


class PairNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.msg = nn.Sequential(nn.Linear(128, 256), nn.SiLU(), nn.Linear(256, 64))
        self.out = nn.Linear(64, 1)

    def forward(self, feats):
        graphs, n, width = feats.shape
        ids = torch.arange(n, device=feats.device)
        a, b = torch.meshgrid(ids, ids, indexing="ij")
        keep = a != b
        a, b = a[keep], b[keep]
        h = feats.reshape(graphs * n, width)
        src, dst = a.repeat(graphs), b.repeat(graphs)
        m = self.msg(torch.cat([h[src], h[dst]], dim=-1))
        h = h + torch.zeros_like(h).index_add_(0, dst, m)
        return self.out(h.view(graphs, n, width).sum(1)).squeeze(-1)


model = PairNet().cuda()
opt = torch.optim.Adam(model.parameters())
loader = DataLoader(Atoms(), batch_size=GRAPHS, drop_last=True)
for feats, y in loader:
    feats, y = feats.cuda(), y.cuda()
    loss = (model(feats) - y).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('edges picked by a boolean mask and repeated per graph grow with the pairs of atoms', async () => {
  const [small, large] = [await estimateText(pairNet(24), 'atoms24.py'), await estimateText(pairNet(48), 'atoms48.py')];
  // Per edge: the two gathered rows joined (128), SiLU's input (256) and the last linear's input (256), fp32; the
  // mask's pairs are counted whole (24 x 24 per graph, the 24 self pairs among them).
  const edges = 32 * 24 * 24;
  assert.ok(small.breakdown.activations > 0.9 * edges * 640 * 4, `${small.breakdown.activations}`);
  const ratio = large.breakdown.activations / small.breakdown.activations;
  assert.ok(ratio > 3.6 && ratio < 4.2, `48 atoms / 24 atoms ${ratio}`);
});

const builtBeforeTheLoop = (atoms: number): string => `import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

ATOMS = ${atoms}
GRAPHS = 64


def pair_edges(n, graphs, device):
    ids = torch.arange(n, device=device)
    a, b = torch.meshgrid(ids, ids, indexing="ij")
    keep = a != b
    a, b = a[keep], b[keep]
    shift = (torch.arange(graphs, device=device) * n).repeat_interleave(a.numel())
    return a.repeat(graphs) + shift, b.repeat(graphs) + shift


class Atoms(Dataset):
    def __len__(self):
        return 1024

    def __getitem__(self, i):
        return torch.randint(0, 8, (ATOMS,))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(8, 128)
        self.msg = nn.Sequential(nn.Linear(256, 128), nn.SiLU())
        self.out = nn.Linear(128, 1)

    def forward(self, z, src, dst):
        h = self.embed(z)
        m = self.msg(torch.cat([h[src], h[dst]], dim=-1))
        h = h + torch.zeros_like(h).index_add_(0, dst, m)
        return self.out(h).sum()


def main():
    device = torch.device("cuda")
    model = Net().to(device)
    opt = torch.optim.Adam(model.parameters())
    src, dst = pair_edges(ATOMS, GRAPHS, device)
    loader = DataLoader(Atoms(), batch_size=GRAPHS, drop_last=True)
    for z in loader:
        z = z.to(device).flatten()
        loss = model(z, src, dst)
        opt.zero_grad()
        loss.backward()
        opt.step()


if __name__ == "__main__":
    main()
`;

test('an edge list a function of the script builds before the loop sizes the messages of the whole batch of graphs', async () => {
  const [small, large] = [await estimateText(builtBeforeTheLoop(20), 'pairs20.py'), await estimateText(builtBeforeTheLoop(40), 'pairs40.py')];
  // Per edge, for the 64 graphs of a step: the gathered rows joined (256) and SiLU's input (128), fp32; the mask's
  // pairs counted whole (20 x 20 per graph).
  const edges = 64 * 20 * 20;
  assert.ok(small.breakdown.activations > 0.9 * edges * 384 * 4, `${small.breakdown.activations}`);
  assert.ok(small.breakdown.activations < 1.5 * edges * 384 * 4, `${small.breakdown.activations}`);
  const ratio = large.breakdown.activations / small.breakdown.activations;
  assert.ok(ratio > 3.5 && ratio < 4.2, `40 atoms / 20 atoms ${ratio}`);
});

const pickedRows = (pick: string): string => `import torch
import torch.nn as nn


class Picker(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(32, 256)
        self.out = nn.Linear(256, 4)

    def forward(self, x):
        h = self.inp(x)
        keep = h[..., 0] > 0
        return self.out(${pick}).sum()


model = Picker().cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(10):
    x = torch.randn(16, 512, 32, device="cuda")
    loss = model(x)
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('a mask over the leading axes picks rows of the trailing ones, at most all of them', async () => {
  // `h[keep]` of a (16, 512, 256) tensor by a (16, 512) mask is at most (16 x 512, 256): as large as every row.
  const [masked, every] = [await estimateText(pickedRows('h[keep]'), 'masked.py'), await estimateText(pickedRows('h.reshape(-1, 256)'), 'every.py')];
  const ratio = masked.breakdown.activations / every.breakdown.activations;
  assert.ok(ratio > 0.8 && ratio < 1.3, `masked / every row ${ratio}`);
});
