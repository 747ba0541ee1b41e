// nn.EmbeddingBag pools each bag of ids into one vector (its output has no sequence axis), a step argument that is a
// dict of per-step tensors reaches forward as a dict, torch.sparse.mm (a graph's adjacency times node features)
// makes a product the next layer keeps, as a dense mm would; a model fed a folded tensor (`points.reshape(-1, 3)`:
// rays x samples) takes the rows one batch sample makes; packed sequences are said to be counted padded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';

const bagClassifier = (layer: string, pool: string, length: number) => `import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB = 60000
WIDTH = 192
DOC_LEN = ${length}
BATCH = 1024

class BagOfWords(nn.Module):
    def __init__(self):
        super().__init__()
        self.words = ${layer}
        self.hidden = nn.Linear(WIDTH, 768)
        self.out = nn.Linear(768, 20)

    def forward(self, ids):
        v = ${pool}
        return self.out(F.relu(self.hidden(v)))

net = BagOfWords().cuda()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for _ in range(3):
    ids = torch.randint(0, VOCAB, (BATCH, DOC_LEN), device="cuda")
    y = torch.randint(0, 20, (BATCH,), device="cuda")
    loss = F.cross_entropy(net(ids), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('an EmbeddingBag is modelled: its parameters count, and its pooled output does not grow with the bag length', async () => {
  const bag = (length: number) => bagClassifier('nn.EmbeddingBag(VOCAB, WIDTH, mode="mean")', 'self.words(ids)', length);
  const [short, long] = await Promise.all([estimateText(bag(32), 'bag32.py'), estimateText(bag(512), 'bag512.py')]);
  for (const result of [short, long]) {
    assert.equal(result.detected.parameters, 60000 * 192 + 192 * 768 + 768 + 768 * 20 + 20);
    assert.ok(!result.assumptions.some((a) => a.includes('EmbeddingBag')), result.assumptions.join('\n'));
  }
  // What backward keeps after the bag (the linear's input, the ReLU's output) is per document, not per word; only
  // the int64 bookkeeping of the ids grows with the length.
  const perDocument = 1024 * (192 + 768) * 4;
  assert.ok(short.breakdown.activations >= perDocument, `short ${short.breakdown.activations}`);
  assert.ok(long.breakdown.activations - short.breakdown.activations <= 1024 * (512 - 32) * 8 * 1.5,
    `short ${short.breakdown.activations}, long ${long.breakdown.activations}`);
});

const dictBatch = `import torch
import torch.nn as nn

N_FEATURES = 13
BATCH = 4096

def make_batch():
    counts = torch.randint(1, 12, (BATCH,))
    starts = torch.cat([torch.zeros(1, dtype=torch.long), counts.cumsum(0)[:-1]])
    return {
        "sparse_ids": torch.randint(0, 20000, (int(counts.sum()),), device="cuda"),
        "sparse_starts": starts.cuda(),
        "dense": torch.randn(BATCH, N_FEATURES, device="cuda"),
        "clicked": torch.rand(BATCH, device="cuda"),
    }

class ClickModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.categorical = nn.EmbeddingBag(20000, 64, mode="sum")
        self.bottom = nn.Sequential(nn.Linear(N_FEATURES, 512), nn.ReLU())
        self.top = nn.Sequential(nn.Linear(64 + 512, 256), nn.ReLU(), nn.Linear(256, 1))

    def forward(self, features):
        pooled = self.categorical(features["sparse_ids"], features["sparse_starts"])
        numeric = self.bottom(features["dense"])
        return self.top(torch.cat([pooled, numeric], dim=1)).squeeze(1)

model = ClickModel().cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(4):
    features = make_batch()
    loss = nn.functional.binary_cross_entropy_with_logits(model(features), features["clicked"])
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('a dict of per-step tensors given to forward reaches it as a dict: each entry traced per sample, 1-D ids with offsets one bag each', async () => {
  const result = await estimateText(dictBatch, 'dict_batch.py');
  assert.equal(result.detected.parameters, 20000 * 64 + 13 * 512 + 512 + 576 * 256 + 256 + 256 + 1);
  assert.ok(!result.assumptions.some((a) => a.includes('EmbeddingBag')), result.assumptions.join('\n'));
  // Kept per sample: the bottom ReLU's output (512), the top linear's input (the concatenation, 576) and its
  // ReLU's output (256), in fp32; the bag's int64 bookkeeping is a few bytes more.
  const kept = 4096 * (512 + 576 + 256) * 4;
  assert.ok(result.breakdown.activations >= kept && result.breakdown.activations < 2 * kept, `activations ${result.breakdown.activations}, expected about ${kept}`);
});

const graphNet = (aggregate: string) => `import torch
import torch.nn as nn
import torch.nn.functional as F

NODES = 50000
FEATURES = 300

def normalized_adjacency(n, edges):
    src = torch.randint(0, n, (edges,), device="cuda")
    dst = torch.randint(0, n, (edges,), device="cuda")
    values = torch.full((edges,), 1.0 / 16, device="cuda")
    return torch.sparse_coo_tensor(torch.stack([src, dst]), values, (n, n)).coalesce()

class GCN(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = nn.Linear(FEATURES, 256)
        self.second = nn.Linear(256, 16)

    def forward(self, h, adjacency):
        h = F.relu(self.first(${aggregate.replace('X', 'h')}))
        return self.second(${aggregate.replace('X', 'h')})

adjacency = normalized_adjacency(NODES, NODES * 16)
h = torch.randn(NODES, FEATURES, device="cuda")
y = torch.randint(0, 16, (NODES,), device="cuda")
gcn = GCN().cuda()
opt = torch.optim.Adam(gcn.parameters(), lr=0.01)
for epoch in range(3):
    loss = F.cross_entropy(gcn(h, adjacency), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('torch.sparse.mm(adjacency, features) is a product like torch.mm: the layer after it keeps what it makes', async () => {
  const [sparse, dense, none] = await Promise.all([
    estimateText(graphNet('torch.sparse.mm(adjacency, X)'), 'sparse_gcn.py'),
    estimateText(graphNet('torch.mm(adjacency, X)'), 'dense_gcn.py'),
    estimateText(graphNet('X'), 'no_aggregation.py'),
  ]);
  assert.equal(sparse.breakdown.activations, dense.breakdown.activations);
  // The aggregated features the first linear takes (300 per node) are kept beside what the net keeps without them.
  assert.ok(sparse.breakdown.activations - none.breakdown.activations >= 50000 * 300 * 4,
    `sparse ${sparse.breakdown.activations}, without aggregation ${none.breakdown.activations}`);
});

const pointField = (call: string, depths = 'torch.linspace(2, 6, SAMPLES, device="cuda").expand(RAYS, SAMPLES) + torch.rand(RAYS, SAMPLES, device="cuda") * 0.01') => `import torch
import torch.nn as nn
import scene_io

RAYS = 2048
SAMPLES = 96

class Field(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(3, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 4))

    def forward(self, points):
        return self.net(points)

def shade(field, origins, directions, depths):
    points = origins[:, None] + directions[:, None] * depths[..., None]
    out = ${call}
    return out.view(origins.shape[0], -1, 4).mean(1)

field = Field().cuda()
opt = torch.optim.Adam(field.parameters(), lr=1e-3)
for step in range(3):
    origins = torch.randn(RAYS, 3, device="cuda")
    directions = torch.randn(RAYS, 3, device="cuda")
    depths = ${depths}
    loss = shade(field, origins, directions, depths).square().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('a model called on a tensor whose leading axes are folded into its rows: the rows per batch sample come from running the step', async () => {
  const results = await Promise.all(['field(points.reshape(-1, 3))', 'field(points.view(-1, 3).contiguous())', 'field(points.flatten(0, 1))']
    .map((call) => estimateText(pointField(call), 'fold.py')));
  for (const result of results) {
    assert.ok(result.assumptions.some((a) => a.includes('one batch sample makes 96 rows')), result.assumptions.join('\n'));
    // Per ray, 96 points each keep the ReLUs' outputs (128 + 128) and the linears' inputs (128 + 128 beyond the
    // data's 3): at least 96 x 256 fp32 values a ray.
    assert.ok(result.breakdown.activations >= 2048 * 96 * 256 * 4, `activations ${result.breakdown.activations}`);
  }
  // Depths the estimate cannot size (read by a module of the user's): the rows per sample are not known, and it says so.
  const unknown = await estimateText(pointField('field(points.reshape(-1, 3))', 'scene_io.load_depths(RAYS).cuda()'), 'unknown.py');
  assert.ok(unknown.assumptions.some((a) => a.includes('unknown number of rows') && a.includes('--batch-size')), unknown.assumptions.join('\n'));
  // The rows of a tensor the step gives whole are the batch's: nothing to say.
  const whole = await estimateText(pointField('field(points[:, 0])'), 'whole.py');
  assert.ok(!whole.assumptions.some((a) => a.includes('folds other axes')), whole.assumptions.join('\n'));
});

const tagger = (pack: boolean) => `import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(30000, 200)
        self.lstm = nn.LSTM(200, 384, batch_first=True, bidirectional=True)
        self.out = nn.Linear(768, 17)

    def forward(self, tokens, lengths):
        x = self.embed(tokens)
${pack ? `        x = pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
        x, _ = self.lstm(x)
        x, _ = pad_packed_sequence(x, batch_first=True, total_length=tokens.shape[1])` : '        x, _ = self.lstm(x)'}
        return self.out(x)

model = Tagger().cuda()
opt = torch.optim.AdamW(model.parameters())
for step in range(3):
    tokens = torch.randint(0, 30000, (64, 300), device="cuda")
    lengths = torch.randint(20, 301, (64,), device="cuda")
    tags = torch.randint(0, 17, (64, 300), device="cuda")
    loss = nn.functional.cross_entropy(model(tokens, lengths).transpose(1, 2), tags)
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('packed sequences are counted at the padded length, and the estimate says it is an upper bound', async () => {
  const [packed, padded] = await Promise.all([estimateText(tagger(true), 'packed.py'), estimateText(tagger(false), 'padded.py')]);
  assert.ok(packed.assumptions.some((a) => a.includes('sequences are packed (line 14)')), packed.assumptions.join('\n'));
  assert.ok(!padded.assumptions.some((a) => a.includes('sequences are packed')), padded.assumptions.join('\n'));
});

test("a batch from the loader flattened per sample (`x.view(-1, 784)`) is not a folded input", async () => {
  const result = await estimateText(`import torch
import torch.nn as nn
from torchvision import datasets, transforms

train = datasets.MNIST("data", train=True, download=True, transform=transforms.ToTensor())
loader = torch.utils.data.DataLoader(train, batch_size=256, shuffle=True)
model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 10)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in loader:
    x, y = x.cuda(), y.cuda()
    loss = nn.functional.cross_entropy(model(x.view(-1, 784)), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
`, 'mnist_mlp.py');
  assert.ok(!result.assumptions.some((a) => a.includes('folds other axes')), result.assumptions.join('\n'));
});
