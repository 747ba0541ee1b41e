// A SparseAdam built beside another optimizer holds the sparse embedding tables (it rejects dense gradients),
// whichever of the two the script builds last, so the tables get SparseAdam's two dense states and the other
// optimizer's states and temporaries cover the dense rest; a sparse table's gradient is a row per id looked up; a
// language model's output passed straight into the script's own loss function (`score(model(x).logits, y)`) is gone
// once that function returns, so the logits are not kept through backward, only alive while the loss runs; a table
// looked up by several index tensors holds a sort-based index_put_'s int64 buffers in backward (probe_ops10).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimate } from '../../server/src/estimator/model';
import { estimateText } from './helpers';

const recommender = (optimizers: string) => `import torch
import torch.nn as nn

FIELDS = 12
ROWS = 400_000
DIM = 16

class Recommender(nn.Module):
    def __init__(self):
        super().__init__()
        self.tables = nn.ModuleList([nn.Embedding(ROWS, DIM, sparse=True) for _ in range(FIELDS)])
        self.mlp = nn.Sequential(nn.Linear(FIELDS * DIM, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 1))

    def forward(self, ids):
        v = torch.cat([table(ids[:, i]) for i, table in enumerate(self.tables)], dim=1)
        return self.mlp(v).squeeze(1)

model = Recommender().cuda()
${optimizers}
for step in range(20):
    ids = torch.randint(0, ROWS, (8192, FIELDS), device="cuda")
    y = torch.rand(8192, device="cuda")
    loss = nn.functional.binary_cross_entropy_with_logits(model(ids), y)
    sparse_opt.zero_grad()
    dense_opt.zero_grad()
    loss.backward()
    sparse_opt.step()
    dense_opt.step()
`;

test('SparseAdam beside a dense optimizer holds the sparse tables, in either order: two states for the tables, the other optimizer\'s for the rest', async () => {
  const sparseFirst = 'sparse_opt = torch.optim.SparseAdam(list(model.tables.parameters()), lr=1e-3)\ndense_opt = torch.optim.Adagrad(model.mlp.parameters(), lr=1e-2)';
  const denseFirst = 'dense_opt = torch.optim.Adagrad(model.mlp.parameters(), lr=1e-2)\nsparse_opt = torch.optim.SparseAdam(list(model.tables.parameters()), lr=1e-3)';
  const tables = 12 * 400_000 * 16;
  const dense = 12 * 16 * 1024 + 1024 + 1024 * 1024 + 1024 + 1024 + 1;
  for (const [name, optimizers] of [['sparse-first.py', sparseFirst], ['dense-first.py', denseFirst]] as const) {
    const r = await estimateText(recommender(optimizers), name);
    assert.equal(r.detected.parameters, tables + dense, name);
    assert.equal(r.config.optimizer, 'adagrad', name);
    assert.ok(r.assumptions.some((a) => a.startsWith(`SparseAdam (line ${name === 'sparse-first.py' ? 19 : 20}) holds the sparse embeddings`) && a.includes((tables).toLocaleString('en-US'))),
      r.assumptions.join('\n'));
    // SparseAdam: exp_avg and exp_avg_sq, dense, for every table; Adagrad: state_sum for the MLP.
    assert.equal(r.breakdown.optimizerStates, (2 * tables + dense) * 4, `${name}: ${JSON.stringify(r.breakdown)}`);
    // Adagrad's foreach temporaries cover the MLP alone, not the tables: the step stays under the weights twice over.
    assert.ok(r.peakAllocated < (tables + dense) * 4 * 3 + 512 * 2 ** 20, `${name}: ${r.peakAllocated} ${r.peakPhase}`);
  }
});

const scoredLm = (forward: string) => `import torch
from transformers import AutoModelForCausalLM

model = AutoModelForCausalLM.from_pretrained("gpt2").cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)

def sequence_logps(logits, labels):
    logps = torch.gather(logits.float().log_softmax(-1), 2, labels.unsqueeze(2)).squeeze(2)
    return logps.sum(-1)

for step in range(10):
    ids = torch.randint(0, 50257, (8, 1024), device="cuda")
${forward}
    loss = -logps.mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
`;

test('a language model\'s logits passed straight into the script\'s loss function are not kept through backward; a name that holds the output keeps them', async () => {
  const passed = await estimateText(scoredLm('    logps = sequence_logps(model(input_ids=ids).logits, ids)'), 'passed.py');
  const named = await estimateText(scoredLm('    out = model(input_ids=ids)\n    logps = sequence_logps(out.logits, ids)'), 'named.py');
  assert.equal(passed.config.outputKept, false);
  assert.equal(named.config.outputKept, true);
  const logits = 8 * 1024 * 50257 * 4;
  assert.equal(named.breakdown.activations - passed.breakdown.activations, logits,
    `named ${JSON.stringify(named.breakdown)}, passed ${JSON.stringify(passed.breakdown)}`);
  assert.equal(named.peakAllocated - passed.peakAllocated, logits);
  // They are still alive while the loss over them runs: the phase before backward holds the same tensors either way.
  assert.equal(estimate(passed.config).phases.forward, estimate(named.config).phases.forward);
});

const hashedGrid = `import torch
import torch.nn as nn

POINTS = 262144
LEVELS = 16
CORNERS = 8

class Grid(nn.Module):
    def __init__(self):
        super().__init__()
        self.table = nn.Parameter(torch.zeros(LEVELS, 2 ** 19, 2))
        self.head = nn.Linear(LEVELS * 2, 1)

    def forward(self, hashed, weights):
        level = torch.arange(LEVELS, device=hashed.device)[None, :, None]
        feats = self.table[level, hashed]
        return self.head((weights.unsqueeze(-1) * feats).sum(2).flatten(1))

grid = Grid().cuda()
opt = torch.optim.SGD(grid.parameters(), lr=0.1)
for step in range(10):
    hashed = torch.randint(0, 2 ** 19, (POINTS, LEVELS, CORNERS), device="cuda")
    weights = torch.rand(POINTS, LEVELS, CORNERS, device="cuda")
    loss = grid(hashed, weights).square().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('a table looked up by two index tensors: its backward holds the lookup\'s gradient and about 8 int64 values an index element (probe_ops10)', async () => {
  const r = await estimateText(hashedGrid, 'grid.py');
  const phases = estimate(r.config).phases;
  // Measured on the H200 (test/gpu/estimator/results/probe_ops10.json): 7.6-8.0 int64 values an index element beside
  // the lookup's gradient (one int64's worth for a width-2 fp32 table) while the sort-based index_put_ runs.
  const indexElements = 262144 * 16 * 8;
  // Over what forward keeps: the forward phase also holds what its locals keep alive at once (forward-locals.test.ts),
  // which backward has freed by the time index_put_ runs.
  const model = r.config.model;
  const liveExcess = 'forwardLiveExcessBytesPerSample' in model ? (model.forwardLiveExcessBytesPerSample?.fp32 ?? 0) * r.config.batchSize : 0;
  const transient = phases.backward - (phases.forward - liveExcess);
  assert.ok(transient >= 8.5 * 8 * indexElements && transient <= 10 * 8 * indexElements, `${transient / (8 * indexElements)} int64 units`);
});

const bagOfIds = (length: number) => `import torch
import torch.nn as nn

class Bag(nn.Module):
    def __init__(self):
        super().__init__()
        self.table = nn.EmbeddingBag(2_000_000, 64, mode="sum", sparse=True)
        self.out = nn.Linear(64, 1)

    def forward(self, ids):
        return self.out(self.table(ids)).squeeze(1)

model = Bag().cuda()
sparse_opt = torch.optim.SparseAdam(list(model.table.parameters()), lr=1e-3)
dense_opt = torch.optim.SGD(model.out.parameters(), lr=0.1)
for step in range(10):
    sparse_opt.zero_grad()
    dense_opt.zero_grad()
    ids = torch.randint(0, 2_000_000, (4096, ${length}), device="cuda")
    loss = model(ids).square().mean()
    loss.backward()
    sparse_opt.step()
    dense_opt.step()
`;

test('a sparse table\'s gradient holds a row of values and an int64 index for every id looked up: it grows with the ids, not the table', async () => {
  const [short, long] = [await estimateText(bagOfIds(8), 'short.py'), await estimateText(bagOfIds(64), 'long.py')];
  const [shortStep, longStep] = [estimate(short.config).phases['optimizer-step'], estimate(long.config).phases['optimizer-step']];
  // 4096 x 56 more ids: 64 fp32 values and an int64 index each (the ids themselves, int64, are the step's input).
  const moreIds = 4096 * 56;
  assert.ok(longStep - shortStep >= moreIds * (64 * 4 + 8), `${longStep - shortStep} vs ${moreIds * (64 * 4 + 8)}`);
  assert.ok(longStep - shortStep <= moreIds * (64 * 4 + 8 + 16), `${longStep - shortStep}`);
  // Never a table-sized gradient.
  assert.ok(short.breakdown.gradients < 2_000_000 * 64 * 4 / 10, JSON.stringify(short.breakdown));
});
