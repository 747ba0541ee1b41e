// What a derivative taken with create_graph=True keeps, by the activation it goes through (issue #13, held-out set
// 12: an energy network with Softplus trained through its gradient over a rollout), and a loss written by hand over
// the one tensor forward returns (a soft Dice over a 3-D segmentation's logits). Figures computed in the comments.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { EstimateResult } from '../../server/src/estimator';
import { derivativeActivationOf, derivativeKeptRatio } from '../../server/src/estimator/derivative-graphs';
import { estimateText, fixturesDir } from './helpers';

const fixture = (dir: string, name: string): { text: string; file: string } => {
  const file = path.join(fixturesDir, dir, name);
  return { text: fs.readFileSync(file, 'utf8'), file };
};

const layers = (result: EstimateResult) => {
  assert.equal(result.config.model.kind, 'layers');
  return result.config.model as Extract<EstimateResult['config']['model'], { kind: 'layers' }>;
};

test('the kept ratio follows what each activation saves: tanh, SiLU and ReLU as measured, Softplus from its input', () => {
  // Measured on the H200 (results/step_keeps.json): tanh 3.0 and 8.9 at orders 1 and 2, SiLU 4.0 and 8.75, ReLU 2.0
  // and 3.0 x the plain forward.
  assert.equal(derivativeKeptRatio('tanh', 1), 3);
  assert.ok(Math.abs(derivativeKeptRatio('tanh', 2) - 8.9) < 1e-9);
  assert.equal(derivativeKeptRatio('silu', 1), 4);
  assert.ok(Math.abs(derivativeKeptRatio('silu', 2) - 8.75) < 1e-9);
  assert.equal(derivativeKeptRatio('relu', 1), 2);
  assert.equal(derivativeKeptRatio('relu', 2), 3);
  // Softplus saves its input beside the next layer's: its forward keeps 2 per layer, its gradient 2 more (the
  // incoming gradient softplus_backward saves and the weighted layer's pre-activation gradient): 2 x, not tanh's 3.
  assert.equal(derivativeKeptRatio('softplus', 1), 2);
  // LeakyReLU's backward saves no gradient: 2 + 1 over 2.
  assert.equal(derivativeKeptRatio('leaky_relu', 1), 1.5);
  // The rest as measured by probe_hnn13 (results/probe_hnn13.jsonl): GELU 2.0, ELU 2.0, sigmoid 3.0, Mish 5.0.
  assert.equal(derivativeKeptRatio('gelu', 1), 2);
  assert.equal(derivativeKeptRatio('elu', 1), 2);
  assert.equal(derivativeKeptRatio('sigmoid', 1), 3);
  assert.equal(derivativeKeptRatio('mish', 1), 5);
  // Of several named, the one whose derivatives keep most; none named: undefined.
  assert.equal(derivativeActivationOf(['Linear', 'Softplus', 'SiLU'], 1), 'silu');
  assert.equal(derivativeActivationOf(['Linear', 'Softplus'], 1), 'softplus');
  assert.equal(derivativeActivationOf(['Linear', 'Dropout'], 1), undefined);
});

test('an energy net\'s gradient over a rollout: Softplus\'s figures, not a no_grad simulator\'s sin, on every step', async () => {
  const { text, file } = fixture('derivative-graphs', 'energy_flow_softplus.py');
  const result = await estimateText(text, file);
  // The reference trajectories call torch.sin and torch.cos under no_grad: the net's own Softplus sizes the graphs.
  assert.equal(result.config.inputDerivativeActivation, 'softplus');
  assert.equal(result.config.inputDerivativeOrder, 1);
  assert.ok(result.assumptions.some((a) => /sized by what Softplus saves for them.*2 x what the forward alone keeps/.test(a)), result.assumptions.join('\n'));
  // `net.field(s)` runs the net's layers (its body calls self.body): each of the 10 rollout steps is a forward whose
  // graph the loss's backward runs through.
  assert.ok(result.assumptions.some((a) => /^10 forwards \(line 39\)/.test(a)), result.assumptions.join('\n'));
  // Per row the forward keeps 2,305 elements (3 x 384 x 2 and the output); with the gradient's graph 2 x that, for
  // 10 x 3,000 rows in fp32: 2 x 2,305 x 4 x 30,000 = 553 MB.
  const saved = layers(result).savedElementsPerSample;
  assert.ok(Math.abs(saved - 2305) <= 16, String(saved));
  const expected = 2 * saved * 4 * 30_000;
  const activations = result.breakdown!.activations;
  assert.ok(Math.abs(activations - expected) < 0.03 * expected, `${activations} vs ${expected}`);
});

const pinn = (activation: string) => `import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(3, 512), nn.${activation}(), nn.Linear(512, 512), nn.${activation}(), nn.Linear(512, 1)).cuda()
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
pts = torch.rand(100_000, 3, device="cuda", requires_grad=True)
for step in range(50):
    u = net(pts)
    du = torch.autograd.grad(u, pts, torch.ones_like(u), create_graph=True)[0]
    loss = du.pow(2).sum(1).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('one script, four activations: the derivative graph grows by what each one saves', async () => {
  const ratios = new Map<string, number>();
  for (const activation of ['Tanh', 'Softplus', 'SiLU', 'ReLU']) {
    const withGraph = await estimateText(pinn(activation), `pinn_${activation}.py`);
    const plain = await estimateText(pinn(activation).replace('create_graph=True', 'retain_graph=True'), `plain_${activation}.py`);
    ratios.set(activation, withGraph.breakdown!.activations / plain.breakdown!.activations);
  }
  // Kept over the plain forward's: 3 (tanh), 2 (Softplus), 4 (SiLU), 2 (ReLU); the plain forward's saved tensors
  // are most of what is counted, the loss's are small.
  for (const [activation, ratio] of [['Tanh', 3], ['Softplus', 2], ['SiLU', 4], ['ReLU', 2]] as const) {
    const found = ratios.get(activation)!;
    assert.ok(Math.abs(found - ratio) < 0.1 * ratio, `${activation}: ${found} vs ${ratio}`);
  }
});

test('a soft Dice written by hand over 3-D logits: its softmax and its float one-hot are kept, in fp32', async () => {
  const { text, file } = fixture('step-losses', 'seg3d_soft_dice.py');
  const result = await estimateText(text, file);
  const net = layers(result);
  // The logits: 9 classes x 112^3 voxels per sample.
  const logits = 9 * 112 ** 3;
  assert.equal(net.outputElementsPerSample, logits);
  // softmax(logits.float()) keeps its output; the one-hot made float is the product's other operand: 2 x the logits,
  // both fp32 under autocast (the one-hot's int64 copy is freed once cast). Measured on the H200 with this loss over a
  // 3-D net's bf16 logits (probe_hnn13, results/probe_hnn13.jsonl): 189 MiB more kept than cross-entropy alone at
  // 2 x 14 x 96^3 (2.0 x the logits in fp32), 128 MiB at 1 x 8 x 128^3 (2.0 x).
  assert.ok(Math.abs((net.stepKeptElementsPerSample ?? 0) - 2 * logits) < 64, String(net.stepKeptElementsPerSample));
  assert.ok(Math.abs((net.stepKeptFp32ElementsPerSample ?? 0) - 2 * logits) < 64, String(net.stepKeptFp32ElementsPerSample));
  // At backward's start the softmax's gradient and its input's come beside the cross-entropy's (measured: 4 x the fp32
  // logits over what is kept with the Dice term, 2 x without): 2 x the logits more, in fp32.
  const extra = net.stepLossExtraGradientsPerSample!;
  assert.ok(Math.abs(extra.elements - 2 * logits) < 64 && extra.fp32 === extra.elements, JSON.stringify(extra));
  // The same step with cross-entropy alone keeps none of it: 2 x 2 x 9 x 112^3 x 4 bytes = 181 MB less.
  const plain = await estimateText(text.replace(' + soft_dice(logits, labels, CLASSES)', ''), 'seg3d_ce.py');
  assert.equal(layers(plain).stepKeptElementsPerSample, undefined);
  const difference = result.breakdown!.activations - plain.breakdown!.activations;
  const expected = 2 * 2 * logits * 4;
  assert.ok(Math.abs(difference - expected) < 0.02 * expected, `${difference} vs ${expected}`);
});

test('in place, LeakyReLU and ELU save their output: the next layer\'s input, one tensor less per layer', () => {
  assert.equal(derivativeActivationOf(['Conv2d', 'LeakyReLU_'], 1), 'leaky_relu_inplace');
  assert.equal(derivativeKeptRatio('leaky_relu_inplace', 1), 2);
  assert.equal(derivativeKeptRatio('elu_inplace', 1), 3);
  // ReLU saves its output either way.
  assert.equal(derivativeActivationOf(['ReLU_'], 1), 'relu');
});

const tagger = (loss: string) => `import torch
import torch.nn as nn


class Tagger(nn.Module):
    def __init__(self, vocab=4000, dim=256, tags=2000):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.mix = nn.Linear(dim, dim)
        self.out = nn.Linear(dim, tags)

    def forward(self, ids):
        return self.out(torch.relu(self.mix(self.embed(ids))))


def nll_by_hand(logits, tags):
    logp = logits.log_softmax(-1)
    return -logp.gather(-1, tags.unsqueeze(-1)).mean()


model = Tagger().cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(10):
    ids = torch.randint(0, 4000, (32, 512), device="cuda")
    tags = torch.randint(0, 2000, (32, 512), device="cuda")
    logits = model(ids)
    loss = ${loss}
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('a hand-written loss without cross-entropy keeps what it computes in place of the cross-entropy\'s log-softmax', async () => {
  const byHand = await estimateText(tagger('nll_by_hand(logits, tags)'), 'tagger_by_hand.py');
  const net = layers(byHand);
  // log_softmax keeps its fp32 output: one logits-sized tensor, 2,000 x 512 per sample.
  assert.equal(net.stepLossInPlaceOfOutputLoss, true);
  assert.ok(Math.abs((net.stepKeptElementsPerSample ?? 0) - 2000 * 512) < 64, String(net.stepKeptElementsPerSample));
  // The same as cross_entropy's log-softmax, which the default terms count: the two steps keep the same.
  const builtIn = await estimateText(tagger('nn.functional.cross_entropy(logits.flatten(0, 1), tags.flatten())'), 'tagger_ce.py');
  assert.equal(layers(builtIn).stepLossInPlaceOfOutputLoss, undefined);
  const [a, b] = [byHand.breakdown!.activations, builtIn.breakdown!.activations];
  assert.ok(Math.abs(a - b) < 0.02 * b, `${a} vs ${b}`);
});
