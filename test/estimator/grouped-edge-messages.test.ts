// Relational graph nets written by hand: a loop over edge types picks each type's edges (a boolean mask, nonzero,
// torch.where), gathers their source rows, transforms them and sums them into the target nodes. Each type's gather is
// a copy of its own that a layer keeps, and index_add keeps the messages it sums (its source's gradient is the
// output's picked rows expanded to the source), so forward keeps every edge's rows once per layer. How many edges a
// type holds comes from the draw of the edge types (`torch.randint(0, T, (E,))`: E / T each). The graph is built
// whole by the script's own function: the figures are the step's, whatever batch is assumed. The fixtures are small
// scripts of their own; the figures are worked by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';

/** Per-type linears over the rows a boolean mask picks, summed by scatter_add_ into zeros. */
const maskedTypes = `import torch
import torch.nn as nn
import torch.nn.functional as F

NODES = 40_000
EDGES = 800_000
TYPES = 8
FEATS = 64
HIDDEN = 128
CLASSES = 10


def make_graph(device):
    feats = torch.randn(NODES, FEATS, device=device)
    edge_index = torch.randint(0, NODES, (2, EDGES), device=device)
    etype = torch.randint(0, TYPES, (EDGES,), device=device)
    labels = torch.randint(0, CLASSES, (NODES,), device=device)
    return feats, edge_index, etype, labels


class TypedConv(nn.Module):
    def __init__(self, dim_in, dim_out):
        super().__init__()
        self.dim_out = dim_out
        self.per_type = nn.ModuleList([nn.Linear(dim_in, dim_out, bias=False) for _ in range(TYPES)])
        self.root = nn.Linear(dim_in, dim_out)

    def forward(self, x, edge_index, etype):
        src, dst = edge_index[0], edge_index[1]
        agg = torch.zeros(x.size(0), self.dim_out, device=x.device)
        for t in range(TYPES):
            mask = etype == t
            m = self.per_type[t](x[src[mask]])
            agg.scatter_add_(0, dst[mask].unsqueeze(-1).expand_as(m), m)
        return self.root(x) + agg


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = TypedConv(FEATS, HIDDEN)
        self.conv2 = TypedConv(HIDDEN, HIDDEN)
        self.head = nn.Linear(HIDDEN, CLASSES)

    def forward(self, x, edge_index, etype):
        h = F.relu(self.conv1(x, edge_index, etype))
        h = F.relu(self.conv2(h, edge_index, etype))
        return self.head(h)


def main():
    device = torch.device("cuda")
    feats, edge_index, etype, labels = make_graph(device)
    model = Net().to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for epoch in range(50):
        logits = model(feats, edge_index, etype)
        loss = F.cross_entropy(logits, labels)
        opt.zero_grad()
        loss.backward()
        opt.step()


if __name__ == "__main__":
    main()
`;

test('edges picked per type by a boolean mask: every type\'s gathered rows are kept by its linear', async () => {
  const r = await estimateText(maskedTypes, 'typed-conv.py');
  assert.equal(r.unresolved, undefined);
  // The first layer's per-type linears keep the features gathered for their edges (no history, still their input),
  // the second's the hidden rows: E x 64 and E x 128 fp32 over the types; then the ReLUs' outputs and the logits.
  const edges = 800_000;
  const gathered = edges * (64 + 128) * 4;
  const nodes = 40_000 * (128 + 128 + 10) * 4;
  assert.ok(r.breakdown.activations > 0.95 * (gathered + nodes), `${r.breakdown.activations}`);
  assert.ok(r.breakdown.activations < 1.25 * (gathered + nodes), `${r.breakdown.activations}`);
});

const indexedTypes = (pick: string): string => `import torch
import torch.nn as nn

NODES = 30_000
EDGES = 600_000
TYPES = 12
DIM = 96


def build_edges(device):
    nodes = torch.arange(NODES, device=device)
    src = torch.randint(0, NODES, (EDGES,), device=device)
    dst = torch.randint(0, NODES, (EDGES,), device=device)
    kind = torch.randint(0, TYPES, (EDGES,), device=device)
    return nodes, src, dst, kind


class GroupedMessages(nn.Module):
    def __init__(self, dim, types):
        super().__init__()
        self.types = types
        self.weight = nn.Parameter(torch.randn(types, dim, dim) * 0.02)
        self.gate = nn.Linear(dim, dim)

    def forward(self, h, src, dst, kind):
        out = self.gate(h)
        for k in range(self.types):
            idx = ${pick}
            if idx.numel() == 0:
                continue
            out = out.index_add(0, dst[idx], h[src[idx]] @ self.weight[k])
        return out


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.table = nn.Embedding(NODES, DIM)
        self.blocks = nn.ModuleList([GroupedMessages(DIM, TYPES) for _ in range(3)])

    def forward(self, nodes, src, dst, kind):
        h = self.table(nodes)
        for block in self.blocks:
            h = torch.relu(block(h, src, dst, kind))
        return h


def main():
    device = torch.device("cuda")
    nodes, src, dst, kind = build_edges(device)
    model = Encoder().to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(100):
        h = model(nodes, src, dst, kind)
        loss = h.pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()


if __name__ == "__main__":
    main()
`;

for (const [label, pick] of [
  ['torch.nonzero(as_tuple=True)', 'torch.nonzero(kind == k, as_tuple=True)[0]'],
  ['Tensor.nonzero().squeeze(1)', '(kind == k).nonzero().squeeze(1)'],
  ['torch.where(mask)', 'torch.where(kind == k)[0]'],
]) {
  test(`edges picked per type by ${label} and summed by index_add: the gathered rows and the messages are kept`, async () => {
    const r = await estimateText(indexedTypes(pick), 'grouped-messages.py');
    assert.equal(r.unresolved, undefined);
    assert.deepEqual(r.assumptions.filter((a) => /not modelled/.test(a)), []);
    // Per block and edge: the gathered source row (the product's input, its weight trains) and the message
    // index_add sums (kept for the source's gradient), 96 fp32 each; then the ReLUs' outputs (the gate's inputs).
    const kept = 3 * 600_000 * 2 * 96 * 4 + 3 * 30_000 * 96 * 4;
    assert.ok(r.breakdown.activations > 0.95 * kept, `${r.breakdown.activations}`);
    assert.ok(r.breakdown.activations < 1.25 * kept, `${r.breakdown.activations}`);
  });
}

test('a comparison with drawn types picks its share of the edges: half below T / 2, none outside the range', async () => {
  const half = await estimateText(indexedTypes('torch.nonzero(kind < TYPES // 2, as_tuple=True)[0]'), 'half-edges.py');
  // Each of the 12 passes picks half the edges: 6 x E rows gathered and 6 x E messages a block.
  const kept = 3 * 6 * 600_000 * 2 * 96 * 4 + 3 * 30_000 * 96 * 4;
  assert.ok(half.breakdown.activations > 0.95 * kept, `${half.breakdown.activations}`);
  assert.ok(half.breakdown.activations < 1.25 * kept, `${half.breakdown.activations}`);
  const none = await estimateText(indexedTypes('torch.nonzero(kind == k + TYPES, as_tuple=True)[0]'), 'no-edges.py');
  assert.ok(none.breakdown.activations < 0.01 * half.breakdown.activations, `${none.breakdown.activations}`);
});

/** Tokens routed to their top-2 of 4 experts: each expert's rows picked by nonzero over topk's indices. */
const routedTokens = `import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 8
TOKENS = 256
WIDTH = 256
HIDDEN = 1024
EXPERTS = 4
TOP = 2


class Expert(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.Linear(WIDTH, HIDDEN)
        self.down = nn.Linear(HIDDEN, WIDTH)

    def forward(self, x):
        return self.down(F.gelu(self.up(x)))


class RoutedFFN(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = nn.Linear(WIDTH, EXPERTS)
        self.experts = nn.ModuleList([Expert() for _ in range(EXPERTS)])

    def forward(self, x):
        tokens = x.view(-1, WIDTH)
        gates = self.gate(tokens).softmax(-1)
        weight, top = gates.topk(TOP, dim=-1)
        out = torch.zeros_like(tokens)
        for e in range(EXPERTS):
            rows, slot = torch.nonzero(top == e, as_tuple=True)
            out.index_add_(0, rows, self.experts[e](tokens[rows]) * weight[rows, slot, None])
        return out.view_as(x)


model = RoutedFFN().cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(10):
    x = torch.randn(BATCH, TOKENS, WIDTH, device="cuda")
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('tokens routed by topk and picked per expert by nonzero: each expert keeps its share of the picks', async () => {
  const r = await estimateText(routedTokens, 'routed-ffn.py');
  assert.deepEqual(r.assumptions.filter((a) => /not modelled/.test(a)), []);
  // 2048 tokens x 2 picks over 4 experts: 1024 rows an expert, read as spread evenly. Each keeps the picked rows (256),
  // GELU's input and the down projection's input (1024 each), the expert's output and its product with the gate
  // weight (index_add_'s source, 256 each), and the gate column; then the loss's square keeps the output.
  const experts = 4 * 1024 * (256 + 1024 + 1024 + 256 + 256 + 1) * 4;
  const output = 2048 * 256 * 4;
  assert.ok(r.breakdown.activations > 0.95 * (experts + output), `${r.breakdown.activations}`);
  assert.ok(r.breakdown.activations < 1.1 * (experts + output), `${r.breakdown.activations}`);
});

/**
 * The probe's per-type loops (test/gpu/estimator/probe_rgcn13.py) over node rows a table holds, 50,000 nodes, 10^6
 * edges of 20 types, width 128: `body` is the loop's, `weights` how the per-type weights are held.
 */
const probeLoop = (body: string, weights: string): string => `import torch
import torch.nn as nn

N, E, R, D = 50_000, 1_000_000, 20, 128


def build(device):
    nodes = torch.arange(N, device=device)
    src = torch.randint(0, N, (E,), device=device)
    dst = torch.randint(0, N, (E,), device=device)
    rel = torch.randint(0, R, (E,), device=device)
    norm = torch.rand(E, device=device)
    return nodes, src, dst, rel, norm


class Loop(nn.Module):
    def __init__(self):
        super().__init__()
        self.table = nn.Embedding(N, D)
        ${weights}

    def forward(self, nodes, src, dst, rel, norm):
        h = self.table(nodes)
        out = h * 1.0
        for r in range(R):
${body}
        return out


def main():
    device = torch.device("cuda")
    nodes, src, dst, rel, norm = build(device)
    model = Loop().to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(10):
        loss = model(nodes, src, dst, rel, norm).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()


main()
`;

const trained = 'self.w = nn.Parameter(torch.randn(R, D, D))';
const nonzeroIndexAdd = `            idx = (rel == r).nonzero(as_tuple=True)[0]
            msg = h[src[idx]] @ self.w[r] * norm[idx, None]
            out = out.index_add(0, dst[idx], msg)`;
const maskScatterAdd = `            mask = rel == r
            msg = h[src[mask]] @ self.w[r]
            out = out.scatter_add(0, dst[mask].unsqueeze(1).expand(-1, D), msg)`;

test('index_add keeps the messages it sums and scatter_add does not: the differences the H200 measured', async () => {
  const [indexAdd, scatterAdd, frozen] = await Promise.all([
    estimateText(probeLoop(nonzeroIndexAdd, trained), 'index-add.py'),
    estimateText(probeLoop(maskScatterAdd, trained), 'scatter-add.py'),
    estimateText(probeLoop(nonzeroIndexAdd, 'self.register_buffer("w", torch.randn(R, D, D))'), 'frozen-weights.py'),
  ]);
  // Kept by forward, measured (test/gpu/estimator/results/probe_rgcn13.jsonl): 1020.1 MiB with index_add, 528.0 with
  // scatter_add (the messages, E x D fp32, not kept), 531.8 with index_add and weights without gradients (the
  // gathered rows not kept by the product).
  const MIB = 1024 * 1024;
  const messages = (indexAdd.breakdown.activations - scatterAdd.breakdown.activations) / MIB;
  const gathered = (indexAdd.breakdown.activations - frozen.breakdown.activations) / MIB;
  assert.ok(Math.abs(messages - (1020.1 - 528.0)) < 0.1 * (1020.1 - 528.0), `${messages} MiB`);
  assert.ok(Math.abs(gathered - (1020.1 - 531.8)) < 0.1 * (1020.1 - 531.8), `${gathered} MiB`);
});

/** A batch of images a script's function makes, once before the loop or at every step: not a graph. */
const madeBatch = (beforeLoop: boolean): string => `import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 64


def make_batch(device):
    x = torch.randn(BATCH, 3, 64, 64, device=device)
    y = torch.randint(0, 10, (BATCH,), device=device)
    return x, y


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 64, 3, padding=1)
        self.c2 = nn.Conv2d(64, 64, 3, padding=1)
        self.fc = nn.Linear(64, 10)

    def forward(self, x):
        x = F.relu(self.c2(F.relu(self.c1(x))))
        return self.fc(x.mean((2, 3)))


model = Net().cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
${beforeLoop ? 'x, y = make_batch("cuda")\n' : ''}for it in range(100):
${beforeLoop ? '' : '    x, y = make_batch("cuda")\n'}    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('a batch of images a script\'s function makes keeps its batch axis: a larger batch asked for keeps more', async () => {
  for (const beforeLoop of [false, true]) {
    const [at64, at128] = [await estimateText(madeBatch(beforeLoop), 'made-batch.py'), await estimateText(madeBatch(beforeLoop), 'made-batch.py', { batchSize: 128 })];
    const ratio = at128.breakdown.activations / at64.breakdown.activations;
    assert.ok(ratio > 1.9 && ratio < 2.1, `before the loop: ${beforeLoop}, 128 / 64: ${ratio}`);
  }
});
