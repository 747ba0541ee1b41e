// How the trace of a script's own module follows code that held-out set 7 showed it lost: helpers declared
// @staticmethod / @classmethod, step arguments the loop body computes from the batch (a noised image, a label
// replaced by a null class, token ids shifted for teacher forcing), buffers and a short-time Fourier transform
// inside forward, a tied output projection through `embedding.weight`, a dataset handed a scaled tensor, F.pad,
// and a forward nothing can follow (which must say so). Each fixture is a small script of its own; the figures
// are worked by hand or compared with the same model written plainly.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';
import type { LayerNetSpec } from '../../server/src/estimator/types';

const spec = (r: Awaited<ReturnType<typeof estimateText>>): LayerNetSpec => {
  assert.equal(r.config.model.kind, 'layers');
  return r.config.model as LayerNetSpec;
};

const stackScript = (forwardBody: string, helper: string, build: string): string => `import torch
import torch.nn as nn

WIDTH = 96

class Stack(nn.Module):
    def __init__(self, width, depth=3):
        super().__init__()
        self.stages = nn.ModuleList([nn.Linear(width, width) for _ in range(depth)])
        self.head = nn.Linear(width, 10)
${helper}
    def forward(self, x):
${forwardBody}
        return self.head(x)

model = ${build}.cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(4):
    x = torch.randn(64, WIDTH, device="cuda")
    loss = model(x).logsumexp(-1).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('a @staticmethod helper called as self._helper(...) gets no receiver; a @classmethod builder gets the class', async () => {
  const plain = await estimateText(stackScript(`        for stage in self.stages:
            x = torch.relu(stage(x))`, '', 'Stack(WIDTH)'), 'plain.py');
  const helped = await estimateText(stackScript('        x = self._through(self.stages, x)', `
    @staticmethod
    def _through(stages, h):
        for stage in stages:
            h = torch.relu(stage(h))
        return h

    @classmethod
    def default(cls, width):
        return cls(width, depth=3)
`, 'Stack.default(WIDTH)'), 'helped.py');
  const [a, b] = [spec(plain), spec(helped)];
  // Three 96x96 linears and the 96x10 head.
  assert.equal(b.parameters, 3 * (96 * 96 + 96) + 96 * 10 + 10);
  assert.equal(b.forwardUntraced, undefined);
  assert.ok(a.savedElementsPerSample > 0);
  assert.equal(b.savedElementsPerSample, a.savedElementsPerSample);
  assert.equal(b.outputElementsPerSample, 10);
});

const diffusionScript = (call: string): string => `import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

CLASSES = 10
STEPS = 500

class Pictures(Dataset):
    def __len__(self):
        return 256

    def __getitem__(self, i):
        return torch.rand(3, 32, 32), torch.randint(0, CLASSES, ()).item()

class Denoiser(nn.Module):
    def __init__(self):
        super().__init__()
        self.label = nn.Embedding(CLASSES + 1, 64)
        self.time = nn.Linear(1, 64)
        self.mix = nn.Linear(64, 64)
        self.conv_in = nn.Conv2d(3, 64, 3, padding=1)
        self.conv_out = nn.Conv2d(64, 3, 3, padding=1)

    def forward(self, x, t, y):
        cond = self.mix(F.silu(self.label(y) + self.time(t.float()[:, None])))
        h = F.silu(self.conv_in(x) + cond[:, :, None, None])
        return self.conv_out(h)

model = Denoiser().cuda()
opt = torch.optim.Adam(model.parameters())
for images, labels in DataLoader(Pictures(), batch_size=16):
    images, labels = images.cuda(), labels.cuda()
    keep = torch.rand(labels.shape[0], device="cuda") > 0.2
    labels = torch.where(keep, labels, torch.full_like(labels, CLASSES))
    steps = torch.randint(0, STEPS, (images.shape[0],), device="cuda")
    noise = torch.randn_like(images)
    noisy = images * 0.7 + noise * 0.3
    loss = F.mse_loss(${call}, noise)
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('step arguments the loop body computes from the batch are traced with the batch\'s shapes', async () => {
  // model(noisy, steps, labels): the noised images and the relabelled classes are made in the loop body; the
  // same model called on the loader's own tensors must keep just as much.
  const derived = spec(await estimateText(diffusionScript('model(noisy, steps, labels)'), 'derived.py'));
  const direct = spec(await estimateText(diffusionScript('model(images, steps, labels)'), 'direct.py'));
  assert.equal(derived.forwardUntraced, undefined);
  assert.equal(derived.outputElementsPerSample, 3 * 32 * 32);
  assert.equal(derived.savedElementsPerSample, direct.savedElementsPerSample);
  // The label embedding looks up one row per sample: the conditioning is 64 numbers (the first SiLU keeps its
  // input, the mixing linear the SiLU's output), broadcast over the map, not an image's worth. The second SiLU keeps
  // its input (64x32x32) and conv_out the SiLU's output (64x32x32); conv_in's input is the step's data, alive anyway.
  // `t.float()` of the integer steps is a new fp32 tensor, which the time Linear keeps as its input: 1 more.
  assert.equal(direct.savedElementsPerSample, 2 * 64 + 2 * 64 * 32 * 32 + 1);
  // The same loop over whole batches, unpacked in its body.
  const unpacked = diffusionScript('model(noisy, steps, labels)').replace(
    'for images, labels in DataLoader(Pictures(), batch_size=16):\n    images, labels = images.cuda(), labels.cuda()',
    'for batch in DataLoader(Pictures(), batch_size=16):\n    images, labels = batch[0].cuda(), batch[1].cuda()');
  assert.ok(unpacked.includes('for batch in'));
  assert.equal(spec(await estimateText(unpacked, 'unpacked.py')).savedElementsPerSample, direct.savedElementsPerSample);
});

const speechScript = `import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

VOCAB = 500
TEXT = 20

class Clips(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        return torch.randn(16000), torch.randint(0, VOCAB, (TEXT + 1,))

class Spectrogram(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("window", torch.hann_window(400))
        self.register_buffer("bank", torch.zeros(40, 201))

    @torch.no_grad()
    def forward(self, wav):
        power = torch.stft(wav, 400, 160, window=self.window, return_complex=True).abs() ** 2
        return torch.clamp(self.bank @ power, min=1e-9).log()

class Listener(nn.Module):
    def __init__(self):
        super().__init__()
        self.front = Spectrogram()
        self.conv = nn.Conv1d(40, 32, 3, padding=1)
        self.tokens = nn.Embedding(VOCAB, 32)

    def forward(self, wav, text):
        audio = self.conv(self.front(wav)).mean(-1)
        x = self.tokens(text) + audio[:, None, :]
        return x @ self.tokens.weight.t()

model = Listener().cuda()
opt = torch.optim.AdamW(model.parameters())
for wav, toks in DataLoader(Clips(), batch_size=8):
    wav, toks = wav.cuda(), toks.cuda()
    inp, tgt = toks[:, :-1], toks[:, 1:]
    logits = model(wav, inp)
    loss = nn.functional.cross_entropy(logits.reshape(-1, VOCAB), tgt.reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('buffers, torch.stft, a tied projection through embedding.weight and tokens sliced in the loop body', async () => {
  const s = spec(await estimateText(speechScript, 'speech.py'));
  assert.equal(s.forwardUntraced, undefined);
  // Teacher forcing over toks[:, :-1]: 20 positions, each scored against the 500-word vocabulary of the tied table.
  assert.equal(s.outputElementsPerSample, 20 * 500);
  // 16,000 samples, hop 160, centred: 101 frames of 201 bins, pooled to 40 mel bands by the bank buffer. The
  // convolution keeps its 40 x 101 input; the token sum feeds a matmul with the weight, which keeps it (20 x 32).
  assert.ok(s.savedElementsPerSample >= 40 * 101 + 20 * 32, `${s.savedElementsPerSample}`);
  // Nothing of the spectrogram itself (computed without grad, 201 x 101) is kept.
  assert.ok(s.savedElementsPerSample < 40 * 101 + 20 * 32 + 201 * 101, `${s.savedElementsPerSample}`);
});

const forecastScript = `import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

SERIES = 8
WINDOW = 50

class Windows(Dataset):
    def __init__(self, values, width):
        self.values, self.width = values, width

    def __len__(self):
        return self.values.shape[0] - self.width

    def __getitem__(self, i):
        return self.values[i:i + self.width], self.values[i + self.width]

class Forecaster(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(SERIES, 16, 3, dilation=2)
        self.head = nn.Linear(16, SERIES)

    def forward(self, x):
        scale = x.std(1, keepdim=True) + 1e-5
        h = self.conv(F.pad((x / scale).transpose(1, 2), (4, 0)))
        return self.head(h[:, :, -1]) * scale[:, 0]

data = torch.randn(1000, SERIES).cumsum(0) * 0.1
model = Forecaster().cuda()
opt = torch.optim.Adam(model.parameters())
for x, y in DataLoader(Windows(data, WINDOW), batch_size=32):
    loss = F.mse_loss(model(x.cuda()), y.cuda())
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('a dataset handed a scaled tensor gives its windows\' shape; F.pad and a reduction keep the causal length', async () => {
  const s = spec(await estimateText(forecastScript, 'forecast.py'));
  assert.equal(s.forwardUntraced, undefined);
  assert.equal(s.outputElementsPerSample, 8);
  // The convolution keeps its padded input (8 x 54); the head reads the last step of the 16 x 50 output, a view
  // that keeps the whole output alive.
  assert.ok(s.savedElementsPerSample >= 8 * 54 + 16 * 50, `${s.savedElementsPerSample}`);
  assert.ok(s.savedElementsPerSample < 8 * 54 + 16 * 50 + 8 * 50 * 2 + 64, `${s.savedElementsPerSample}`);
});

test('a forward the engine cannot follow says so instead of showing its activations as a figure', async () => {
  const r = await estimateText(`import torch
import torch.nn as nn
import somelib

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(128, 128)

    def forward(self, x):
        x = somelib.prepare(x)
        return self.body(x)[somelib.pick]

model = Net().cuda()
opt = torch.optim.Adam(model.parameters())
for step in range(4):
    loss = model(torch.randn(32, 128, device="cuda")).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
`, 'untraced.py');
  assert.equal(spec(r).forwardUntraced, true);
  assert.ok(r.assumptions.some((a) => a.includes('forward() of Net could not be followed')), r.assumptions.join('\n'));
});

const crossAttentionScript = (memoryLength: number): string => `import torch
import torch.nn as nn

class Reader(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(16, 32)
        self.tok = nn.Embedding(100, 32)
        layer = nn.TransformerDecoderLayer(32, 4, 64, dropout=0.0, batch_first=True)
        self.dec = nn.TransformerDecoder(layer, 2)
        self.out = nn.Linear(32, 100)

    def forward(self, frames, tokens):
        return self.out(self.dec(self.tok(tokens), self.enc(frames)))

model = Reader().cuda()
opt = torch.optim.Adam(model.parameters())
for step in range(3):
    frames = torch.randn(8, ${memoryLength}, 16, device="cuda")
    tokens = torch.randint(0, 100, (8, 10), device="cuda")
    loss = model(frames, tokens).logsumexp(-1).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('a decoder layer\'s cross-attention keeps the memory and 3 memory-sized tensors a layer, at the memory\'s length', async () => {
  const short = spec(await estimateText(crossAttentionScript(50), 'short.py'));
  const long = spec(await estimateText(crossAttentionScript(100), 'long.py'));
  assert.equal(long.outputElementsPerSample, 10 * 100);
  // 50 more memory positions of width 32: the memory itself once, and keys, values and their input in each of the
  // 2 layers.
  assert.equal(long.savedElementsPerSample - short.savedElementsPerSample, 50 * 32 * (1 + 2 * 3));
});

test('under autocast, a half tensor kept both as a GroupNorm\'s fp32 copy and by a 1x1 convolution is counted twice', async () => {
  const r = await estimateText(`import torch
import torch.nn as nn

class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3, padding=1)
        self.norm = nn.GroupNorm(4, 16)
        self.skip = nn.Conv2d(16, 8, 1)
        self.proj = nn.Conv2d(16, 8, 1)

    def forward(self, x):
        h = self.conv(x)
        return self.proj(self.norm(h)) + self.skip(h)

model = Block().cuda()
opt = torch.optim.AdamW(model.parameters())
for step in range(3):
    x = torch.randn(4, 3, 8, 8, device="cuda")
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = model(x).float().pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
`, 'gn_skip.py');
  const s = spec(r);
  // h is 16 x 8 x 8 in bf16: the GroupNorm keeps its fp32 copy (4 bytes an element), the skip convolution h itself
  // (2 bytes), and proj the bf16 copy of the GroupNorm's fp32 output (2 bytes).
  assert.equal(s.autocastSavedBytesPerSample, 16 * 8 * 8 * (4 + 2 + 2));
});
