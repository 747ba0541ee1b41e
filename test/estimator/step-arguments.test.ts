// What each argument of the step's call holds, and the dtypes autocast leaves the data in: target tokens of an
// encoder-decoder given their own length (`tgt[:, :-1]` applied), a residual stream an embedding feeds staying fp32
// under autocast (what a checkpoint keeps of each block's input), and logits cast to fp32 before cross_entropy (the
// loss then costs what it does in fp32). Each fixture is a small script of its own; figures are worked by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';
import type { LayerNetSpec } from '../../server/src/estimator/types';

const seq2seqScript = `import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

max_src_len = 40
max_tgt_len = 12
vocab = 3000
batch_size = 32

class Translator(nn.Module):
    def __init__(self):
        super().__init__()
        self.src_emb = nn.Embedding(vocab, 64)
        self.enc = nn.GRU(64, 128, batch_first=True)
        self.tgt_emb = nn.Embedding(vocab, 64)
        self.dec = nn.GRUCell(64 + 128, 128)
        self.out = nn.Linear(128, vocab)

    def forward(self, src, lens, tgt_in):
        packed = pack_padded_sequence(self.src_emb(src), lens.cpu(), batch_first=True, enforce_sorted=False)
        memory, _ = self.enc(packed)
        memory, _ = pad_packed_sequence(memory, batch_first=True, total_length=src.size(1))
        B, T = tgt_in.shape
        h = memory.new_zeros(B, self.enc.hidden_size)
        emb = self.tgt_emb(tgt_in)
        outs = []
        for t in range(T):
            ctx = memory.mean(1)
            h = self.dec(torch.cat([emb[:, t], ctx], dim=-1), h)
            outs.append(h)
        return self.out(torch.stack(outs, dim=1))

model = Translator().cuda()
opt = torch.optim.Adam(model.parameters())
for step in range(3):
    src = torch.randint(0, vocab, (batch_size, max_src_len)).cuda()
    lens = torch.full((batch_size,), max_src_len)
    tgt = torch.randint(0, vocab, (batch_size, max_tgt_len)).cuda()
    logits = model(src, lens, tgt[:, :-1])
    loss = nn.functional.cross_entropy(logits.reshape(-1, vocab), tgt[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('step arguments: target tokens take the targets\' length with the call\'s slice applied, the source the sequence\'s', async () => {
  const r = await estimateText(seq2seqScript, 'seq2seq.py');
  assert.equal(r.detected.seqLen?.value, 40);
  const spec = r.config.rebuildAt!(40) as LayerNetSpec;
  // The decoder loop runs over tgt[:, :-1]: 11 steps, each making vocab logits (not 40 steps, the source's length).
  assert.equal(spec.outputElementsPerSample, 11 * 3000);
  // The encoder ran through pack_padded_sequence: the GRU keeps its 40 x 128 output beside its input.
  assert.ok(spec.savedElementsPerSample >= 40 * 128 + 40 * 64, String(spec.savedElementsPerSample));
});

const layerArgumentsScript = `import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(16, 48, 2, batch_first=True)
        self.fc = nn.Linear(48, 7)

    def forward(self, x):
        h = x.new_zeros(2, x.size(0), self.rnn.hidden_size)
        y, _ = self.rnn(x, (h, h))
        return self.fc(y[:, -1]) + x.new_zeros(x.size(0), self.fc.out_features)

model = Net().cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(8, 30, 16).cuda()
loss = model(x).sum()
loss.backward()
opt.step()
`;

test('layer arguments read back as attributes (rnn.hidden_size, fc.out_features) size new_zeros', async () => {
  const r = await estimateText(layerArgumentsScript, 'attrs.py');
  const spec = r.config.model as LayerNetSpec;
  // fc(y[:, -1]) is (1, 7); new_zeros(1, 7) adds to it without a mismatch: the output stays 7 wide.
  assert.equal(spec.outputElementsPerSample, 7);
});

const residualScript = (embed: string) => `import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint

class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)

    def forward(self, x):
        return x + self.fc2(torch.relu(self.fc1(x)))

class LM(nn.Module):
    def __init__(self, vocab=1000, d=256, n=6):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.proj = nn.Linear(d, d)
        self.blocks = nn.ModuleList([Block(d) for _ in range(n)])
        self.head = nn.Linear(d, vocab)

    def forward(self, idx):
        x = ${embed}
        for block in self.blocks:
            x = checkpoint(block, x, use_reentrant=False)
        return self.head(x)

model = LM().cuda()
opt = torch.optim.AdamW(model.parameters())
for step in range(3):
    idx = torch.randint(0, 1000, (16, 512)).cuda()
    with torch.autocast("cuda", dtype=torch.bfloat16):
        logits = model(idx)
    loss = nn.functional.cross_entropy(logits.float().view(-1, 1000), idx.view(-1))
    loss.backward()
    opt.step()
    opt.zero_grad()
`;

test('autocast: a residual stream an embedding feeds stays fp32, and a checkpoint keeps each block\'s input at 4 bytes', async () => {
  const fp32Stream = await estimateText(residualScript('self.tok(idx)'), 'stream32.py');
  const halfStream = await estimateText(residualScript('self.proj(self.tok(idx))'), 'stream16.py');
  assert.equal(fp32Stream.detected.precision.value, 'bf16-amp');
  assert.deepEqual((fp32Stream.config.model as LayerNetSpec).blockInputFullPrecision, [true, true, true, true, true, true]);
  assert.equal((halfStream.config.model as LayerNetSpec).blockInputFullPrecision, undefined);
  // Six kept inputs of 16 x 512 x 256, 2 bytes more each in fp32 (6 MiB in all); the Linear adds its own saved
  // input and weights, 16 x 512 x 256 x 2 bytes (4 MiB) at most beside 256 x 256 parameters.
  const kept = (r: typeof fp32Stream): number => r.breakdown.activations + r.breakdown.other;
  const extra = 6 * 16 * 512 * 256 * 2;
  assert.ok(kept(fp32Stream) - kept(halfStream) >= extra - 16 * 512 * 256 * 2 - 256 * 256 * 4, `${kept(fp32Stream)} vs ${kept(halfStream)}`);
});

const lossScript = (cast: string) => `import torch
import torch.nn as nn
import torch.nn.functional as F

class LM(nn.Module):
    def __init__(self, vocab=8000, d=128):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.body = nn.Linear(d, d)
        self.head = nn.Linear(d, vocab)

    def forward(self, idx, targets):
        logits = self.head(torch.relu(self.body(self.tok(idx))))
        loss = F.cross_entropy(logits${cast}.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss

model = LM().cuda()
opt = torch.optim.AdamW(model.parameters())
for step in range(3):
    x = torch.randint(0, 8000, (8, 256)).cuda()
    y = torch.randint(0, 8000, (8, 256)).cuda()
    with torch.autocast("cuda", dtype=torch.bfloat16):
        _, loss = model(x, y)
    loss.backward()
    opt.step()
    opt.zero_grad()
`;

test('logits.float() before cross_entropy under autocast: the loss keeps 1 and backward adds 2 fp32 logits (autocast\'s own cast: 1.5 and 1)', async () => {
  const cast = await estimateText(lossScript('.float()'), 'float_loss.py');
  const plain = await estimateText(lossScript(''), 'amp_loss.py');
  assert.deepEqual((cast.config.model as LayerNetSpec).lossInputFp32, { autocast: true, explicit: true });
  assert.equal((plain.config.model as LayerNetSpec).lossInputFp32, undefined);
  // One fp32 logits tensor: 8 x 256 x 8000 x 4 bytes = 62.5 MiB; kept 1 instead of 1.5, backward 2 instead of 1.
  const unit = 8 * 256 * 8000 * 4;
  assert.ok(Math.abs((plain.breakdown.activations - cast.breakdown.activations) - 0.5 * unit) < 0.01 * unit, `${plain.breakdown.activations} - ${cast.breakdown.activations}`);
  assert.ok(Math.abs((cast.breakdown.other - plain.breakdown.other) - unit) < 0.01 * unit, `${cast.breakdown.other} - ${plain.breakdown.other}`);
});

const randomLengthScript = `import random
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader, Dataset

class Sentences(Dataset):
    def __len__(self):
        return 512

    def __getitem__(self, i):
        n = random.randint(24, 96)
        return torch.randint(1, 4000, (n,))

def collate(items):
    return pad_sequence(items, batch_first=True)

class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(4000, 64)
        self.rnn = nn.LSTM(64, 128, batch_first=True)
        self.out = nn.Linear(128, 5)

    def forward(self, ids):
        y, _ = self.rnn(self.emb(ids))
        return self.out(y)

model = Tagger().cuda()
opt = torch.optim.Adam(model.parameters())
for ids in DataLoader(Sentences(), batch_size=64, collate_fn=collate):
    loss = model(ids.cuda()).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('a sample of random length, padded to the longest in its batch: the length is the draw\'s upper bound', async () => {
  const r = await estimateText(randomLengthScript, 'random_len.py');
  // random.randint(24, 96) includes 96: the longest sample, which a batch of 64 padded to its longest reaches.
  assert.equal(r.detected.seqLen?.value, 96);
  assert.ok(!r.assumptions.some((a) => /seq_len not found/.test(a)), r.assumptions.join('; '));
});

// A dataset of random-length token lists: the draws read as their bound, so each sample is a comprehension of
// hundreds of values; the program model keeps such a list's length without evaluating every element, and still
// reads the script after it (the model named in the parsed arguments).
const longDataScript = `
import random
from dataclasses import dataclass, field
import torch
from transformers import BertForSequenceClassification, HfArgumentParser

@dataclass
class Args:
    model_name_or_path: str = field(default="bert-base-uncased")
    batch_size: int = 64
    steps: int = 8

class Samples(torch.utils.data.Dataset):
    def __init__(self, n, seed=0):
        rng = random.Random(seed)
        self.samples = []
        for _ in range(n):
            length = rng.randint(300, 500)
            ids = [rng.randrange(1000, 30000) for _ in range(length)]
            self.samples.append(ids)

def main():
    (args,) = HfArgumentParser(Args).parse_args_into_dataclasses()
    train = Samples(args.batch_size * args.steps)
    extra = Samples(args.batch_size * args.steps, seed=1)
    assert len(train.samples[0]) == 500
    model = BertForSequenceClassification.from_pretrained(args.model_name_or_path, num_labels=3).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-5)

main()
`;

test('a long comprehension of plain values keeps its length and leaves the rest of the script readable', async () => {
  const r = await estimateText(longDataScript, 'long_data.py');
  assert.equal(r.detected.model.name, 'bert-base-uncased');
  assert.equal(r.detected.optimizer.value, 'adamw');
});
