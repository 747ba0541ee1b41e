// Forwards whose graphs one backward runs through, run in loops before it (issue #13, held-out set 8): MAML's inner
// steps and query forwards over a meta-batch of tasks (torch.func.functional_call, `higher`, a learner given its
// weights as a list), first-order variants that free the inner graphs, and a loss summed over a loop of forwards.
// Figures are computed by hand in the comments.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { EstimateResult } from '../../server/src/estimator';
import { estimateText, fixturesDir } from './helpers';

const fixture = (name: string): { text: string; file: string } => {
  const file = path.join(fixturesDir, 'kept-graphs', name);
  return { text: fs.readFileSync(file, 'utf8'), file };
};

const layers = (result: EstimateResult) => {
  assert.equal(result.config.model.kind, 'layers');
  return result.config.model as Extract<EstimateResult['config']['model'], { kind: 'layers' }>;
};



test('second-order MAML written inline: every inner step and query forward of every task is kept', async () => {
  const { text, file } = fixture('maml_inline_mlp.py');
  const result = await estimateText(text, file);
  assert.equal(result.detected.model.name, 'Classifier');
  // The support set's rows (WAYS * SHOTS = 50), where the tensor is made (line 30).
  assert.deepEqual([result.detected.batchSize.value, result.detected.batchSize.line], [50, 30]);
  // 6 tasks x 3 inner steps on 50 rows (900, create_graph) and 6 query forwards on 100 rows (600): 1,500 rows, 30
  // batches of 50; the largest forward is a query's 100 rows; each kept inner step holds a copy of the weights.
  assert.deepEqual(result.config.keptGraphs, { rows: 30, createGraphRows: 18, largestRows: 2, weightCopies: 18 });
  // Under create_graph, the gradients of the three Linear outputs (1,024 + 1,024 + 10) are kept; ReLU keeps none.
  assert.equal(layers(result).createGraphElementsPerSample, 2058);
  // 784 x 1,024 + 1,024 + 1,024 x 1,024 + 1,024 + 1,024 x 10 + 10 parameters, fp32.
  assert.equal(result.detected.parameters, 1_863_690);
  const weights = 1_863_690 * 4;
  // When backward starts: the 1,500 rows' forward tensors (the ReLU outputs, 2 x 1,024, read by the next Linear,
  // and the loss's fp32 log-softmax of 10), the 900 inner rows' output gradients and the 18 fast weights.
  assert.equal(result.peakPhase, 'backward');
  assert.equal(result.breakdown.activations, 1500 * (2048 * 4 + 10 * 4) + 900 * 2058 * 4 + 18 * weights);
  assert.ok(result.assumptions.some((a) => /^24 forwards \(line 36\).*1500 rows in all, 30 x the batch/.test(a)), result.assumptions.join('\n'));
  assert.ok(result.assumptions.some((a) => /^18 of them are inner steps .*create_graph=True/.test(a)), result.assumptions.join('\n'));
  // The inner gradients are over the fast weights: no derivative of an input in the loss.
  assert.ok(!result.assumptions.some((a) => /derivatives of order/.test(a)));
});

test('first-order MAML (no create_graph, or detached gradients): the inner graphs are freed, the queries kept', async () => {
  const { text, file } = fixture('maml_inline_mlp.py');
  const second = await estimateText(text, file);
  const variants = [
    text.replace('create_graph=True', 'create_graph=False'),
    text.replace('w - INNER_LR * g for', 'w - INNER_LR * g.detach() for'),
    text.replace('grads = torch.autograd.grad(inner_loss, fast.values(), create_graph=True)', 'grads = torch.autograd.grad(inner_loss, fast.values())'),
  ];
  for (const variant of variants) {
    assert.notEqual(variant, text);
    const first = await estimateText(variant, file);
    // 6 query forwards of 100 rows, in units of the support set's 50, each on its own task's fast weights.
    assert.deepEqual(first.config.keptGraphs, { rows: 12, createGraphRows: 0, largestRows: 2, weightCopies: 6 });
    assert.equal(first.detected.batchSize.value, 50);
    // 600 query rows and 6 fast weights, against 1,500 rows, the inner gradients' graphs and 18 fast weights.
    assert.equal(first.breakdown.activations, 600 * (2048 * 4 + 10 * 4) + 6 * 1_863_690 * 4);
    assert.ok(first.peakAllocated < second.peakAllocated - 100 * 2 ** 20, `${first.peakAllocated} vs ${second.peakAllocated}`);
  }
  const said = await estimateText(variants[0]!, file);
  assert.ok(said.assumptions.some((a) => /line 36 take their gradient without create_graph \(first order\)/.test(a)), said.assumptions.join('\n'));
});

test('a backward per task keeps one task\'s graphs; one task of one step still keeps the inner step\'s', async () => {
  const { text, file } = fixture('maml_inline_mlp.py');
  const perTask = await estimateText(text
    .replace('        total += F.cross_entropy(functional_call(net, fast, (query,)), query_y)\n    (total / TASKS).backward()',
      '        (F.cross_entropy(functional_call(net, fast, (query,)), query_y) / TASKS).backward()'), file);
  // 3 inner steps of 50 rows and the query's 100: 250 rows, 5 x 50.
  assert.deepEqual(perTask.config.keptGraphs, { rows: 5, createGraphRows: 3, largestRows: 2, weightCopies: 3 });
  const single = await estimateText(text.replace('TASKS = 6', 'TASKS = 1').replace('INNER_STEPS = 3', 'INNER_STEPS = 1'), file);
  assert.deepEqual(single.config.keptGraphs, { rows: 3, createGraphRows: 1, largestRows: 2, weightCopies: 1 });
  // Tasks from an iterable the script does not size: each loop over them counted once, and said.
  const unsized = await estimateText(text.replace('for task in range(TASKS):', 'for task in task_stream():'), file);
  assert.deepEqual(unsized.config.keptGraphs, { rows: 5, createGraphRows: 3, largestRows: 2, weightCopies: 3 });
  assert.ok(unsized.assumptions.some((a) => /runs a number of times the script does not fix: counted once/.test(a)), unsized.assumptions.join('\n'));
});

test('higher: the functional model\'s steps (diffopt.step) keep their graphs until the task\'s backward', async () => {
  const { text, file } = fixture('higher_per_task_backward.py');
  const result = await estimateText(text, file);
  // Per task (its backward is in the task loop): 4 inner steps on 5 support images, the query's 75, in units of 5.
  assert.deepEqual(result.config.keptGraphs, { rows: 19, createGraphRows: 4, largestRows: 15, weightCopies: 4 });
  // Per image (28 -> 14 -> 7 -> 4): each stride-2 conv's output and its BatchNorm's (32 x 14 x 14, 32 x 7 x 7,
  // 32 x 4 x 4, twice: 16,704) and the head's 5 logits have their gradients kept.
  assert.equal(layers(result).createGraphElementsPerSample, 2 * 32 * (14 * 14 + 7 * 7 + 4 * 4) + 5);
  // Not tracked: a first-order step; only the query's forward is kept, as a plain step of 75 images.
  const untracked = await estimateText(text.replace('copy_initial_weights=False', 'copy_initial_weights=False, track_higher_grads=False'), file);
  assert.equal(untracked.config.keptGraphs, undefined);
  assert.equal(untracked.detected.batchSize.value, 75);
});

test('a learner given its weights as a list, adapted in a helper: traced through its own layers', async () => {
  const { text, file } = fixture('learner_weight_list.py');
  const result = await estimateText(text, file);
  // forward(x, weights) is traced on the path without weights (the same layers): tanh's outputs (2 x 256) are kept,
  // and under create_graph the three linears' outputs (256 + 256 + 1) and both tanh outputs' gradients (2 x 256).
  assert.equal(layers(result).savedElementsPerSample, 512);
  assert.equal(layers(result).createGraphElementsPerSample, 1025);
  // 16 tasks x 2 steps on 512 points (create_graph, through the helper's loop) and 16 test forwards on 512.
  assert.deepEqual(result.config.keptGraphs, { rows: 48, createGraphRows: 32, largestRows: 1, weightCopies: 32 });
});

test('a loss summed over a loop of forwards keeps every forward; one rebound in the loop keeps the last', async () => {
  const script = (body: string): string => `import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(512, 2048), nn.GELU(), nn.Linear(2048, 512)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(100):
    x = torch.randn(4096, 512, device="cuda")
${body}
    opt.step()
    opt.zero_grad()
`;
  const summed = await estimateText(script(`    loss = 0
    for k in range(4):
        loss = loss + model(x * k).pow(2).mean()
    loss.backward()`), 'summed.py');
  assert.deepEqual(summed.config.keptGraphs, { rows: 4, createGraphRows: 0, largestRows: 1, weightCopies: 0 });
  // Micro-batches of one batch (`x.chunk(4)`) hold the batch's rows between them: as one forward of the batch.
  const chunked = await estimateText(script(`    loss = 0
    for part in x.chunk(4):
        loss = loss + model(part).pow(2).mean()
    loss.backward()`), 'chunked.py');
  assert.deepEqual(chunked.config.keptGraphs, undefined);
  const whole = await estimateText(script(`    loss = model(x).pow(2).mean()
    loss.backward()`), 'whole.py');
  assert.equal(chunked.peakAllocated, whole.peakAllocated);
  const rebound = await estimateText(script(`    for k in range(4):
        out = model(x * k)
    out.pow(2).mean().backward()`), 'rebound.py');
  assert.equal(rebound.config.keptGraphs, undefined);
  const plain = await estimateText(script(`    out = model(x)
    out.pow(2).mean().backward()`), 'plain.py');
  assert.equal(plain.config.keptGraphs, undefined);
  assert.equal(rebound.peakAllocated, plain.peakAllocated);
  // When backward starts, four forwards of 4,096 rows: GELU's input and the second Linear's (2 x 2,048 a row) and
  // what the loss keeps of the 512 outputs, in fp32.
  assert.equal(summed.peakPhase, 'backward');
  assert.equal(summed.breakdown.activations, 4 * 4096 * (2 * 2048 + 512) * 4);
});

test('a method of the model handed to a stepping helper (`step(model.field, x)` calling `f(x)`) is a forward each call', async () => {
  const script = (handed: string): string => `import torch
import torch.nn as nn


class Field(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, 512), nn.Tanh(), nn.Linear(512, 16))

    def forward(self, x):
        return self.net(x)

    def field(self, x):
        return self.net(x)


def midpoint(f, x, dt):
    k1 = f(x)
    k2 = f(x + 0.5 * dt * k1)
    return x + dt * k2


@torch.no_grad()
def make_batch(n):
    # The same helper, handed a plain function first, where no graph is kept.
    return midpoint(lambda s: torch.sin(s), torch.randn(n, 16, device="cuda"), 0.1)


model = Field().cuda()
opt = torch.optim.Adam(model.parameters())
for it in range(3):
    x = make_batch(1024)
    outs = []
    for s in range(8):
        x = midpoint(${handed}, x, 0.1)
        outs.append(x)
    loss = torch.stack(outs, 1).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
`;
  const method = await estimateText(script('model.field'), 'method.py');
  // The rows are those of the input the helper's `f` is called on: the batch handed to make_batch (line 32, 0-based).
  assert.deepEqual([method.detected.batchSize.value, method.detected.batchSize.line], [1024, 32]);
  // 8 steps x 2 calls of the helper's `f`, each output kept in `outs`: 16 forwards of the batch.
  assert.deepEqual(method.config.keptGraphs, { rows: 16, createGraphRows: 0, largestRows: 1, weightCopies: 0 });
  assert.ok(method.assumptions.some((a) => /^16 forwards \(line 18\)/.test(a)), method.assumptions.join('\n'));
  for (const handed of ['model.forward', 'model', 'f=model.field']) {
    const other = await estimateText(script(handed).replace('midpoint(f=model.field, x, 0.1)', 'midpoint(x=x, dt=0.1, f=model.field)'), `${handed}.py`);
    assert.deepEqual(other.config.keptGraphs, method.config.keptGraphs, handed);
    // The model itself is traced through its forward with shaped tensors; its methods are counted from its layers.
    if (handed !== 'model') assert.equal(other.peakAllocated, method.peakAllocated, handed);
  }
});
