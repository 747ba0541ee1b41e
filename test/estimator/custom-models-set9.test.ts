// Custom models written the way sequence taggers, text recognizers and running-sum layers are: a CRF whose forward
// algorithm reduces with logsumexp at each time step, a recognizer whose backbone is a registry helper's cut of a
// torchvision ResNet (other entries never called), class counts from the string module's alphabets, and a running
// total autocast keeps in fp32. Each fixture is a small script of its own; figures are worked by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';
import type { LayerNetSpec } from '../../server/src/estimator/types';

const crfTagger = `from types import SimpleNamespace
import torch
import torch.nn as nn

args = SimpleNamespace(vocab=1000, emb=32, hidden=64, tags=5, batch_size=16, seq_len=20)


class CRF(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.start = nn.Parameter(torch.randn(k) * 0.1)
        self.end = nn.Parameter(torch.randn(k) * 0.1)
        self.trans = nn.Parameter(torch.randn(k, k) * 0.1)

    def log_partition(self, emissions, mask):
        score = self.start + emissions[:, 0]
        for t in range(1, emissions.size(1)):
            nxt = torch.logsumexp(score.unsqueeze(2) + self.trans + emissions[:, t].unsqueeze(1), dim=1)
            score = torch.where(mask[:, t].unsqueeze(1), nxt, score)
        return torch.logsumexp(score + self.end, dim=1)


class Tagger(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.emb = nn.Embedding(a.vocab, a.emb)
        self.lstm = nn.LSTM(a.emb, a.hidden, bidirectional=True, batch_first=True)
        self.proj = nn.Linear(2 * a.hidden, a.tags)
        self.crf = CRF(a.tags)

    def forward(self, tokens):
        h, _ = self.lstm(self.emb(tokens))
        return self.crf.log_partition(self.proj(h), tokens != 0).mean()


model = Tagger(args).cuda()
opt = torch.optim.Adam(model.parameters())
for _ in range(3):
    tokens = torch.randint(1, args.vocab, (args.batch_size, args.seq_len), device="cuda")
    loss = model(tokens)
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('forward: logsumexp over a dimension removes it, so a CRF forward algorithm looped over time steps is sized', async () => {
  const r = await estimateText(crfTagger, 'crf_tagger.py');
  assert.equal(r.unresolved, undefined);
  assert.equal(r.detected.model.name, 'Tagger');
  // Embedding 1000 x 32; bidirectional LSTM 2 x 4 x (64 x 32 + 64 x 64 + 2 x 64); Linear(128, 5); CRF 5 + 5 + 5 x 5.
  assert.equal(r.detected.parameters, 32_000 + 2 * 4 * (64 * 32 + 64 * 64 + 2 * 64) + (128 * 5 + 5) + 35);
  // The largest tensor of a sample is the LSTM's output (20 x 128), not a score whose rank grew with each step.
  assert.ok((r.config.model as LayerNetSpec).largestElementsPerSample <= 20 * 128 * 4);
});

const recognizer = (trunkIn: string) => `import argparse
import string
import torch
import torch.nn as nn
import torchvision

CHARSET = string.digits + string.ascii_letters + string.punctuation + " "
TRUNKS = {}


def register(name):
    def deco(fn):
        TRUNKS[name] = fn
        return fn
    return deco


@register("resnet18")
def resnet18_trunk():
    m = torchvision.models.resnet18(weights=None)
    return nn.Sequential(*list(m.children())[:-3]), 256


@register("resnet34")
def resnet34_trunk():
    m = torchvision.models.resnet34(weights=None)
    return nn.Sequential(*list(m.children())[:-3]), 256


class Recognizer(nn.Module):
    def __init__(self, arch, classes):
        super().__init__()
        ${trunkIn}
        self.rnn = nn.LSTM(c, 128, batch_first=True)
        self.fc = nn.Linear(128, classes)

    def forward(self, x):
        f = self.cnn(x).mean(dim=2).transpose(1, 2)
        h, _ = self.rnn(f)
        return self.fc(h)


ap = argparse.ArgumentParser()
ap.add_argument("--arch", choices=sorted(TRUNKS), default="resnet34")
args = ap.parse_args()
model = Recognizer(args.arch, len(CHARSET) + 1).cuda()
opt = torch.optim.Adam(model.parameters())
for _ in range(3):
    x = torch.randn(8, 3, 64, 256, device="cuda")
    loss = model(x).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('model: a torchvision trunk cut by a registry helper is a backbone of the module that holds it; the entries never called are not the model', async () => {
  const registered = await estimateText(recognizer('self.cnn, c = TRUNKS[arch]()'), 'recognizer.py');
  // The same trunk cut inside the constructor itself, which the module tree already sizes as the module's part.
  const inline = await estimateText(recognizer('self.cnn = nn.Sequential(*list(torchvision.models.resnet34(weights=None).children())[:-3])\n        c = 256'), 'recognizer_inline.py');
  assert.equal(registered.detected.model.name, 'Recognizer');
  assert.equal(registered.detected.model.source, 'custom');
  assert.equal(inline.detected.model.name, 'Recognizer');
  assert.ok(registered.detected.parameters > 0);
  assert.equal(registered.detected.parameters, inline.detected.parameters);
});

test("program values: the string module's alphabets have their lengths (a recognizer's classes)", async () => {
  const r = await estimateText(`import string
from string import ascii_lowercase
import torch
import torch.nn as nn

CHARSET = string.digits + string.ascii_letters + string.punctuation + " "
model = nn.Sequential(nn.Linear(64, len(CHARSET) + 1), nn.Linear(len(CHARSET) + 1, len(ascii_lowercase))).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(32, 64, device="cuda")
loss = model(x).sum()
loss.backward()
opt.step()
`, 'charset.py');
  // 10 digits + 52 letters + 32 punctuation marks + a space, plus a blank: 96 classes; then 26 lowercase letters.
  assert.equal(r.detected.parameters, (64 * 96 + 96) + (96 * 26 + 26));
});

test('forward: autocast runs a running total (cumsum) in fp32, so what keeps it keeps 4 bytes an element', async () => {
  const r = await estimateText(`import torch
import torch.nn as nn


class Running(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(16, 16)

    def forward(self, x):
        c = self.proj(x).cumsum(dim=1)
        return (c * c).sum()


model = Running().cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(32, 8, 16, device="cuda")
with torch.autocast("cuda", dtype=torch.bfloat16):
    loss = model(x)
loss.backward()
opt.step()
`, 'running_total.py');
  // The product keeps the running total c (8 x 16 per sample) for backward, in fp32.
  assert.equal((r.config.model as LayerNetSpec).autocastSavedBytesPerSample, 8 * 16 * 4);
});

const ensembleScript = (members: number) => `import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, stack_module_state, vmap


def make_mlp(d_in=32, hidden=64, classes=10):
    return nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(), nn.Linear(hidden, classes))


models = [make_mlp().cuda() for _ in range(${members})]
params, buffers = stack_module_state(models)
base = make_mlp().to("meta")


def fmodel(p, b, x):
    return functional_call(base, (p, b), (x,))


ensemble = vmap(fmodel, randomness="different")
opt = torch.optim.Adam(params.values(), lr=1e-3)
for step in range(3):
    x = torch.randn(${members}, 128, 32, device="cuda")
    y = torch.randint(0, 10, (${members}, 128), device="cuda")
    loss = F.cross_entropy(ensemble(params, buffers, x).reshape(-1, 10), y.reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('model: an ensemble stacked by torch.func trains every member\'s parameters, keeps the originals, and runs every member over the batch', async () => {
  const r = await estimateText(ensembleScript(4), 'ensemble.py');
  const member = (32 * 64 + 64) + (64 * 10 + 10);
  assert.equal(r.unresolved, undefined);
  // Four members' stacked parameters are the model's, all trained.
  assert.equal(r.detected.parameters, 4 * member);
  // fp32 weights: the stacked copies and the four original members beside them; Adam's two moments of the stack.
  assert.equal(r.breakdown.weights, 2 * 4 * member * 4);
  assert.equal(r.breakdown.optimizerStates, 2 * 4 * member * 4);
  // Every member runs the batch through its layers: four forwards' activations before the one backward.
  assert.equal(r.config.forwardsPerBackward, 4);
  assert.ok(r.assumptions.some((a) => a.includes('an ensemble of 4 members stacked by torch.func')));
});
