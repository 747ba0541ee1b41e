// torch.compile (inductor) keeps a dropout's bool mask but not its output where forward keeps the dropout's input
// anyway: backward recomputes the output from the two. Measured on the H200 (test/gpu/estimator/results/
// probe_custom9_compile.json, batch 65536, widths 2048, 2048, 1024, 512): Linear -> BatchNorm1d -> ReLU(inplace) ->
// Dropout keeps 4,576 MiB eager and 3,168 compiled (13 and 9 bytes an element); without the Dropout, 2,816 both ways.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';

const BATCH = 8192;
const WIDTHS = [1536, 768, 384];

/** A scoring MLP on 96 features whose hidden blocks end in `block` (the layers after each Linear). */
const scorer = (block: string, compile: boolean) => `import torch
import torch.nn as nn

WIDTHS = [${WIDTHS.join(', ')}]


class Scorer(nn.Module):
    def __init__(self, n_in, widths):
        super().__init__()
        blocks = []
        for w in widths:
            blocks += [nn.Linear(n_in, w), ${block}]
            n_in = w
        self.body = nn.Sequential(*blocks)
        self.head = nn.Linear(n_in, 1)

    def forward(self, x):
        return self.head(self.body(x)).squeeze(-1)


net = Scorer(96, WIDTHS).cuda()
${compile ? 'net = torch.compile(net)' : ''}
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
for step in range(10):
    x = torch.randn(${BATCH}, 96, device="cuda")
    y = torch.rand(${BATCH}, device="cuda")
    loss = nn.functional.mse_loss(net(x), y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
`;

const BN_RELU_DROPOUT = 'nn.BatchNorm1d(w), nn.ReLU(inplace=True), nn.Dropout(0.2)';

test('a compiled MLP keeps no dropout output whose input an in-place ReLU keeps: 4 bytes an element less than eager', async () => {
  const eager = await estimateText(scorer(BN_RELU_DROPOUT, false), 'scorer_eager.py');
  const compiled = await estimateText(scorer(BN_RELU_DROPOUT, true), 'scorer_compiled.py');
  assert.equal(compiled.config.compiled, true);
  assert.equal(compiled.detected.parameters, eager.detected.parameters);
  // Every block's dropout output is what the next Linear (or the head) reads.
  const dropoutOutputs = BATCH * WIDTHS.reduce((sum, w) => sum + w, 0) * 4;
  assert.equal(eager.breakdown.activations - compiled.breakdown.activations, dropoutOutputs);
  const lower = eager.peakAllocated - compiled.peakAllocated;
  assert.ok(lower > 0.9 * dropoutOutputs && lower <= dropoutOutputs + 1, `${lower} vs ${dropoutOutputs}`);
});

test('compiled, an MLP without dropout, or whose dropout reads a tensor nothing keeps (after GELU), keeps what eager does', async () => {
  for (const block of ['nn.BatchNorm1d(w), nn.ReLU(inplace=True)', 'nn.GELU(), nn.Dropout(0.2)']) {
    const eager = await estimateText(scorer(block, false), 'plain_eager.py');
    const compiled = await estimateText(scorer(block, true), 'plain_compiled.py');
    assert.equal(compiled.config.compiled, true);
    assert.equal(compiled.peakAllocated, eager.peakAllocated, block);
  }
});

test('a dropout model traced but never compiled keeps its dropout outputs', async () => {
  // torch.compile only in a branch that never runs: the eager figures stand.
  const text = scorer(BN_RELU_DROPOUT, false).replace('opt = torch.optim', 'if False:\n    net = torch.compile(net)\nopt = torch.optim');
  const eager = await estimateText(scorer(BN_RELU_DROPOUT, false), 'scorer_eager.py');
  const guarded = await estimateText(text, 'scorer_guarded.py');
  assert.notEqual(guarded.config.compiled, true);
  assert.equal(guarded.peakAllocated, eager.peakAllocated);
});
