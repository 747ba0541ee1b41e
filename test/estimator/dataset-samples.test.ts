// The step's inputs as the loader's dataset makes them: `model(x, adj, mask)` inside `for step, (x, adj, mask, y) in
// enumerate(loader)` takes the elements of the tuple `__getitem__` returns, made by tensor expressions (a thresholded
// random matrix, products with a mask). And backward keeps an operand of a product only for the other's gradient.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { LayerNetSpec } from '../../server/src/estimator/types';
import { estimateText } from './helpers';

const NODES = 256;
const FEATS = 64;
const HIDDEN = 128;
const BATCH = 16;

const graphs = (forward: string) => `import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

class Graphs(Dataset):
    def __init__(self, n, nodes, feats):
        self.n, self.nodes, self.feats = n, nodes, feats

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        n = self.nodes
        adj = (torch.rand(n, n) < 0.05).float()
        adj = adj + adj.t()
        mask = torch.zeros(n)
        mask[: n // 2] = 1
        x = torch.randn(n, self.feats) * mask[:, None]
        return x, adj, mask, torch.randint(4, ()).item()

class Net(nn.Module):
    def __init__(self, feats, hidden):
        super().__init__()
        self.lin1 = nn.Linear(feats, hidden)
        self.lin2 = nn.Linear(hidden, hidden)
        self.head = nn.Linear(hidden, 4)

    def forward(self, x, adj, mask):
${forward}
        return self.head(h.sum(1))

model = Net(${FEATS}, ${HIDDEN}).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
loader = DataLoader(Graphs(64, ${NODES}, ${FEATS}), batch_size=${BATCH})
for step, (x, adj, mask, y) in enumerate(loader):
    x, adj, mask, y = x.cuda(), adj.cuda(), mask.cuda(), y.cuda()
    loss = F.cross_entropy(model(x, adj, mask), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

const gcn = `        h = torch.relu(torch.matmul(adj, self.lin1(x))) * mask.unsqueeze(-1)
        h = torch.relu(torch.matmul(adj, self.lin2(h))) * mask.unsqueeze(-1)`;

test('each argument of the step takes its own element of the sample __getitem__ returns, with its shape', async () => {
  const r = await estimateText(graphs(gcn), 'gcn.py');
  const spec = r.config.model as LayerNetSpec;
  // Node features, adjacency and mask of one graph, fp32: alive through the step.
  assert.equal(spec.stepInputBytesPerSample, (NODES * FEATS + NODES * NODES + NODES) * 4);
  // Both ReLU outputs, lin2's input and the head's input. Each matmul keeps the adjacency (the gradient of its
  // other operand needs it) and each product the mask: the data's own tensors, nothing more; the features the
  // matmuls multiply are not kept, since the adjacency needs no gradient.
  assert.equal(spec.savedElementsPerSample, 3 * NODES * HIDDEN + HIDDEN);
});

test('an adjacency the forward normalizes is a tensor of its own: kept once, beside the data', async () => {
  const normalized = await estimateText(graphs(gcn.replace(/torch\.matmul\(adj, /g, 'torch.matmul(a, ')
    .replace('        h = ', '        a = adj / adj.sum(-1, keepdim=True).clamp(min=1)\n        h = ')), 'gcn_norm.py');
  assert.equal((normalized.config.model as LayerNetSpec).savedElementsPerSample, NODES * NODES + 3 * NODES * HIDDEN + HIDDEN);
});

test('a product with a tensor without history (the data, a mask) keeps only that operand', async () => {
  // relu(a) * mask keeps the mask (and relu its output), not a second copy of the product's left operand; with a
  // learned gate instead of the mask both operands are kept.
  const masked = await estimateText(graphs(`        h = torch.relu(self.lin1(x)) * mask.unsqueeze(-1)
        h = self.lin2(h)`), 'masked.py');
  const gated = await estimateText(graphs(`        g = self.lin1(x)
        h = torch.relu(g) * torch.sigmoid(g)
        h = self.lin2(h)`), 'gated.py');
  const saved = (r: typeof masked) => (r.config.model as LayerNetSpec).savedElementsPerSample;
  const perNode = NODES * HIDDEN;
  // masked: lin1's input (excluded: the data), relu's output, the mask, lin2's input. gated: relu's and
  // sigmoid's outputs each kept by the product as well.
  assert.ok(saved(gated) - saved(masked) >= perNode, `${saved(gated)} vs ${saved(masked)}`);
});

test('a dataset that makes its tensor once and slices a sample of it: the step gets the slice, token ids batch first', async () => {
  const r = await estimateText(`import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

SEQ = 128

class Tokens(Dataset):
    def __init__(self, n, seq_len, vocab):
        self.data = torch.randint(0, vocab, (n, seq_len + 1))

    def __len__(self):
        return len(self.data)

    def __getitem__(self, i):
        return self.data[i, :-1], self.data[i, 1:]

class LM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(1000, 64)
        self.rnn = nn.GRU(64, 64, batch_first=True)
        self.head = nn.Linear(64, 1000)

    def forward(self, ids):
        return self.head(self.rnn(self.embed(ids))[0])

model = LM().cuda()
opt = torch.optim.Adam(model.parameters())
loader = DataLoader(Tokens(256, SEQ, 1000), batch_size=8)
for step, (x, y) in enumerate(loader):
    x, y = x.cuda(), y.cuda()
    loss = F.cross_entropy(model(x).view(-1, 1000), y.view(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
`, 'tokens.py');
  const spec = r.config.model as LayerNetSpec;
  // One sample of 128 int64 ids (the row without its last token), and the logits of its 128 positions.
  assert.equal(spec.stepInputBytesPerSample, 128 * 8);
  assert.equal(spec.outputElementsPerSample, 128 * 1000);
});

test('a random crop at an offset the script draws (`base[:, i:i + size]`) keeps the crop size, not the padded image', async () => {
  const r = await estimateText(`import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

SIZE = 96

class Crops(Dataset):
    def __init__(self, n, size):
        self.n, self.size = n, size

    def __len__(self):
        return self.n

    def __getitem__(self, idx):
        base = torch.rand(3, self.size + 16, self.size + 16)
        i, j = torch.randint(0, 16, (2,)).tolist()
        return base[:, i:i + self.size, j:self.size + j].contiguous(), torch.randint(10, ()).item()

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.head = nn.Linear(8, 10)

    def forward(self, x):
        return self.head(F.relu(self.conv(x)).mean((2, 3)))

model = Net().cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
loader = DataLoader(Crops(64, SIZE), batch_size=4)
for x, y in loader:
    x, y = x.cuda(), y.cuda()
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
`, 'crops.py');
  const spec = r.config.model as LayerNetSpec;
  // One 3 x 96 x 96 fp32 crop per sample, not the 112-pixel image it is cut from.
  assert.equal(spec.stepInputBytesPerSample, 3 * 96 * 96 * 4);
});
