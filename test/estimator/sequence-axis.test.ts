// The data's sequence (time) axis, read the way the step receives it: a collate function's crop beside a larger
// positional table, the length of one sample a Dataset makes, token ids laid out (seq, batch) for sequence layers
// without batch_first, and a forward that ends in log_softmax (nll_loss keeps nothing more). Each fixture is a
// small script of its own; each figure follows from it, computed by hand in the comment.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';

const collateScript = `import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

CFG = {"vocab": 5000, "dim": 256, "max_positions": 2048, "crop": 128, "batch": 16}

class Docs(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        return torch.randint(1, CFG["vocab"], (700,))

def build_collate(crop):
    def pad_batch(items):
        out = torch.zeros((len(items), crop), dtype=torch.long)
        for j, ids in enumerate(items):
            out[j, : min(crop, len(ids))] = ids[:crop]
        return out
    return pad_batch

class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(CFG["vocab"], CFG["dim"])
        self.pos = nn.Parameter(torch.zeros(1, CFG["max_positions"], CFG["dim"]))
        self.out = nn.Linear(CFG["dim"], 10)

    def forward(self, ids):
        x = self.tok(ids) + self.pos[:, : ids.size(1)]
        return self.out(x).mean(1)

model = Tagger().cuda()
opt = torch.optim.AdamW(model.parameters())
loader = DataLoader(Docs(), batch_size=CFG["batch"], collate_fn=build_collate(CFG["crop"]))
for ids in loader:
    loss = model(ids.cuda()).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('sequence length: the crop a collate_fn made by a factory pads to, not the positional table\'s capacity nor the raw sample', async () => {
  const r = await estimateText(collateScript, 'collate.py');
  // pad_batch's torch.zeros((len(items), crop)): crop is 128, given on line 5 (0-based 4) through the factory.
  assert.equal(r.detected.seqLen?.value, 128);
  assert.equal(r.detected.seqLen?.line, 5);
  assert.equal(r.detected.batchSize.value, 16);
});

const waveScript = (first: string) => `import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

RATE = 8000
SECONDS = 3

class Clips(Dataset):
    def __init__(self, n, length):
        self.n, self.length = n, length

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        gain = torch.rand(1)
        return (gain * torch.randn(self.length)).unsqueeze(0)

class Denoiser(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(${first}, nn.ReLU(), nn.Conv1d(32, 1, 9, padding=4))

    def forward(self, x):
        return self.net(x)

model = Denoiser().cuda()
opt = torch.optim.Adam(model.parameters())
loader = DataLoader(Clips(64, RATE * SECONDS), batch_size=8)
for wav in loader:
    wav = wav.cuda()
    loss = (model(wav) - wav).abs().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('signal length: one sample a Dataset makes (rate x seconds) is the 1-D length a Conv1d model runs over', async () => {
  const r = await estimateText(waveScript('nn.Conv1d(1, 32, 9, padding=4)'), 'wave.py');
  // torch.randn(self.length) with length = 8,000 x 3; torch.rand(1) is a single draw, not a length.
  assert.equal(r.detected.seqLen?.value, 24000);
  // Saved for backward at least: the ReLU's output (32 channels x 24,000 samples x 8 clips, fp32).
  assert.ok(r.breakdown.activations >= 8 * 32 * 24000 * 4, JSON.stringify(r.breakdown));
  assert.ok(!r.assumptions.some((a) => /seq_len not found/.test(a)), r.assumptions.join('; '));
});

test('ConvTranspose1d is a modelled layer: no "not modelled" assumption', async () => {
  const r = await estimateText(waveScript('nn.ConvTranspose1d(1, 32, 9, padding=4)'), 'wave_t.py');
  assert.ok(!r.assumptions.some((a) => /ConvTranspose1d/.test(a)), r.assumptions.join('; '));
});

const seqFirstScript = (batchFirst: boolean) => `import torch
import torch.nn as nn

VOCAB = 4000
BATCH = 32
BPTT = 70

def batchify(stream, bsz):
    n = stream.size(0) // bsz
    return stream[: n * bsz].view(bsz, -1).t().contiguous()

class WordLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, 256)
        self.rnn = nn.LSTM(256, 512, ${batchFirst ? 'batch_first=True' : '1'})
        self.head = nn.Linear(512, VOCAB)

    def forward(self, x):
        out, _ = self.rnn(self.emb(x))
        return torch.log_softmax(self.head(out), dim=-1)

def get_batch(source, i):
    n = min(BPTT, len(source) - 1 - i)
    return source[i:i + n], source[i + 1:i + 1 + n].reshape(-1)

data = batchify(torch.randint(0, VOCAB, (BATCH * BPTT * 4 + 1,)), BATCH)
model = WordLM().cuda()
opt = torch.optim.SGD(model.parameters(), lr=1.0)
crit = nn.NLLLoss()
for i in range(0, data.size(0) - 1, BPTT):
    x, y = get_batch(data, i)
    opt.zero_grad()
    logp = model(x)
    loss = crit(logp.view(-1, VOCAB), y)
    loss.backward()
    opt.step()
`;

test('(seq, batch) token ids for an LSTM without batch_first: the recurrent reserve covers every step of the window', async () => {
  const seqFirst = await estimateText(seqFirstScript(false), 'seqfirst.py');
  const batchFirst = await estimateText(seqFirstScript(true), 'batchfirst.py');
  // Truncated backpropagation's window is the sequence each step receives.
  assert.equal(seqFirst.detected.seqLen?.value, 70);
  // Both layouts run 32 x 70 tokens through the LSTM: the same activations, whichever axis comes first (before,
  // the seq-first model was traced over one step of a 70-wide batch and kept one step's reserve).
  const a = seqFirst.breakdown.activations;
  const b = batchFirst.breakdown.activations;
  assert.ok(Math.abs(a - b) / b < 0.01, `${a} vs ${b}`);
});

test('a forward that ends in log_softmax: its output is what it keeps, so holding it and nll_loss add no logits-sized tensor', async () => {
  const r = await estimateText(seqFirstScript(false), 'logp.py');
  // Log-probabilities: 32 x 70 x 4,000 fp32 = 35,840,000 bytes, kept once (by log_softmax; the name logp holds
  // the same tensor); backward adds the loss's gradient and log_softmax's input gradient, two more.
  const logProbs = 32 * 70 * 4000 * 4;
  assert.ok(r.breakdown.activations < 2 * logProbs, `${r.breakdown.activations} < ${2 * logProbs}`);
  assert.ok(r.breakdown.activations >= logProbs, `${r.breakdown.activations} >= ${logProbs}`);
  assert.ok(r.breakdown.other >= 2 * logProbs, JSON.stringify(r.breakdown));
});
