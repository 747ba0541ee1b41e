// Custom models built on index ops: a point-cloud net that finds each point's neighbours with topk and gathers
// their features, and a full-batch graph net whose messages run along an edge list far longer than the node list,
// normalised and summed per node with scatter_reduce / index_add_. Their activations follow the neighbour and edge
// counts, read from the step's real input; an op the trace does not know is named, never counted as 0 in silence.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';

const pointCloud = (k: number, sample: string, move: string): string => `import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

POINTS = 1024
NEIGHBOURS = ${k}


def neighbours(x, k):
    inner = torch.matmul(x.transpose(1, 2), x)
    sq = (x ** 2).sum(1, keepdim=True)
    d = 2 * inner - sq - sq.transpose(1, 2)
    return d.topk(k, dim=-1)[1]


def edge_features(x, k):
    b, c, n = x.shape
    idx = neighbours(x, k) + torch.arange(b, device=x.device).view(-1, 1, 1) * n
    flat = x.transpose(1, 2).reshape(b * n, c)
    nbr = flat[idx.view(-1)].view(b, n, k, c)
    centre = x.transpose(1, 2).unsqueeze(2).expand(b, n, k, c)
    return torch.cat([nbr - centre, centre], dim=3).permute(0, 3, 1, 2)


class PointNet(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.k = k
        self.edge1 = nn.Sequential(nn.Conv2d(6, 64, 1), nn.BatchNorm2d(64), nn.ReLU())
        self.edge2 = nn.Sequential(nn.Conv2d(128, 128, 1), nn.BatchNorm2d(128), nn.ReLU())
        self.head = nn.Linear(128, 10)

    def forward(self, x):
        x = self.edge1(edge_features(x, self.k)).amax(dim=-1)
        x = self.edge2(edge_features(x, self.k)).amax(dim=-1)
        return self.head(x.amax(dim=-1))


class Clouds(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        return ${sample}, torch.randint(0, 10, ()).item()


model = PointNet(NEIGHBOURS).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
loader = DataLoader(Clouds(), batch_size=16)
for pts, label in loader:
    pts, label = ${move}, label.cuda()
    loss = nn.functional.cross_entropy(model(pts), label)
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

const edgeList = (degree: number): string => `import torch
import torch.nn as nn
import torch.nn.functional as F

NODES = 50_000
DEGREE = ${degree}
FEATURES = 64


class EdgeAttention(nn.Module):
    def __init__(self, dim_in, dim_out):
        super().__init__()
        self.proj = nn.Linear(dim_in, dim_out)
        self.score = nn.Parameter(torch.randn(dim_out))

    def forward(self, h, edges):
        src, dst = edges[0], edges[1]
        z = self.proj(h)
        msg = z.index_select(0, src)
        logits = (F.leaky_relu(msg + z.index_select(0, dst), 0.2) * self.score).sum(-1)
        peak = torch.full((h.size(0),), -1e9, device=h.device).scatter_reduce(0, dst, logits.detach(), reduce="amax")
        w = (logits - peak.gather(0, dst)).exp()
        total = torch.zeros(h.size(0), device=h.device).index_add_(0, dst, w)
        w = w / total.gather(0, dst)
        out = torch.zeros_like(z)
        out.index_add_(0, dst, msg * w.unsqueeze(-1))
        return out


class EdgeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.one = EdgeAttention(FEATURES, 128)
        self.two = EdgeAttention(128, 16)

    def forward(self, h, edges):
        return self.two(F.elu(self.one(h, edges)), edges)


def build_graph():
    n_edges = NODES * DEGREE
    src = torch.randint(0, NODES, (n_edges,))
    dst = torch.randint(0, NODES, (n_edges,))
    self_loops = torch.arange(NODES)
    edges = torch.stack([torch.cat([src, self_loops]), torch.cat([dst, self_loops])]).cuda()
    feats = torch.randn(NODES, FEATURES).cuda()
    labels = torch.randint(0, 16, (NODES,)).cuda()
    return feats, edges, labels


feats, edges, labels = build_graph()
model = EdgeNet().cuda()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(20):
    loss = F.cross_entropy(model(feats, edges), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

const withOp = (op: string): string => `import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(32, 256)
        self.out = nn.Linear(256, 4)

    def forward(self, x):
        h = self.inp(x)
        h = ${op}
        return self.out(h)


model = Net().cuda()
opt = torch.optim.Adam(model.parameters())
for step in range(10):
    x = torch.randn(512, 32, device="cuda")
    loss = model(x).square().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

const notModelled = (assumptions: string[]): string | undefined => assumptions.find((a) => a.startsWith('operations in forward() not modelled'));

test('a point cloud transposed by the loop body is traced as the (batch, 3, points) tensor the model receives', async () => {
  const transposed = await estimateText(pointCloud(16, 'torch.randn(POINTS, 3)', 'pts.cuda().transpose(1, 2)'), 'transposed.py');
  const laidOut = await estimateText(pointCloud(16, 'torch.randn(3, POINTS)', 'pts.cuda()'), 'laid-out.py');
  assert.equal(notModelled(transposed.assumptions), undefined, transposed.assumptions.join('\n'));
  const ratio = transposed.breakdown.activations / laidOut.breakdown.activations;
  assert.ok(Math.abs(ratio - 1) < 0.01, `transposed / laid out ${ratio}`);
});

test('k-NN edge features grow with the neighbours topk picks', async () => {
  const [few, many] = [await estimateText(pointCloud(16, 'torch.randn(3, POINTS)', 'pts.cuda()'), 'k16.py'),
    await estimateText(pointCloud(32, 'torch.randn(3, POINTS)', 'pts.cuda()'), 'k32.py')];
  const ratio = many.breakdown.activations / few.breakdown.activations;
  assert.ok(ratio > 1.7 && ratio < 2.1, `k=32 / k=16 ${ratio}`);
});

test('messages along an edge list built whole before the loop grow with the edges, scatter ops included', async () => {
  const [sparse, dense] = [await estimateText(edgeList(8), 'degree8.py'), await estimateText(edgeList(16), 'degree16.py')];
  assert.equal(notModelled(sparse.assumptions), undefined, sparse.assumptions.join('\n'));
  // Per edge: the gathered messages, leaky_relu's input and output of each layer (3 x (128 + 16) fp32 values).
  const edges = 50_000 * 8 + 50_000;
  assert.ok(sparse.breakdown.activations > 0.9 * edges * 3 * 144 * 4, `${sparse.breakdown.activations}`);
  const ratio = dense.breakdown.activations / sparse.breakdown.activations;
  assert.ok(ratio > 1.6 && ratio < 2, `degree 16 / degree 8 ${ratio}`);
});

test('functional leaky_relu keeps its input, as nn.LeakyReLU does', async () => {
  const functional = await estimateText(withOp('torch.nn.functional.leaky_relu(h, 0.1)'), 'functional.py');
  const module = await estimateText(withOp('nn.LeakyReLU(0.1)(h)'), 'module.py');
  assert.equal(functional.breakdown.activations, module.breakdown.activations);
});

test('an op the forward trace does not model is listed, not counted as 0 in silence', async () => {
  const estimate = await estimateText(withOp('torch.special.erfcx(h)'), 'unknown-op.py');
  assert.match(notModelled(estimate.assumptions) ?? '', /torch\.special\.erfcx/);
  const known = await estimateText(withOp('torch.tanh(h)'), 'known-op.py');
  assert.equal(notModelled(known.assumptions), undefined);
});
