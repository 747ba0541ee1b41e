// Packed sequences (pack_padded_sequence before a cuDNN GRU/LSTM): the recurrent layer runs over the real tokens
// only, so what it keeps (its packed input, cuDNN's reserve space, its packed output) and its backward workspace
// grow with the mean length of the draws, while the padded tensors around it (the embedding's output, what
// pad_packed_sequence gives back) keep the batch's longest length. Measured on the H200
// (test/gpu/estimator/results/probe_packed.json): cuDNN's reserve per real token is the padded one's (GRU 6, LSTM 5
// hidden vectors a layer and direction).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';

/** A review classifier whose dataset draws each item's length; `pack` packs the padded batch before the GRU. */
const reviews = (lengths: string, pack: boolean) => `import random
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence
from torch.utils.data import DataLoader, Dataset

LONGEST = 320

class Reviews(Dataset):
    def __init__(self, n):
        self.n = n
${lengths.includes('self.sizes') ? `        self.sizes = torch.randint(40, LONGEST + 1, (n,))\n` : ''}
    def __len__(self):
        return self.n

    def __getitem__(self, i):
        n = ${lengths}
        return torch.randint(1, 20000, (n,)), random.randint(0, 3)

def collate(items):
    tokens, labels = zip(*items)
    lengths = torch.tensor([len(t) for t in tokens])
    return pad_sequence(tokens, batch_first=True), lengths, torch.tensor(labels)

class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(20000, 256)
        self.rnn = nn.GRU(256, 384, num_layers=2, batch_first=True, bidirectional=True)
        self.head = nn.Linear(768, 4)

    def forward(self, tokens, lengths):
        x = self.embed(tokens)
${pack ? `        x = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        x, _ = self.rnn(x)
        x, _ = pad_packed_sequence(x, batch_first=True, total_length=tokens.shape[1])` : '        x, _ = self.rnn(x)'}
        return self.head(x.mean(1))

model = Classifier().cuda()
opt = torch.optim.Adam(model.parameters())
loader = DataLoader(Reviews(4096), batch_size=128, collate_fn=collate)
for tokens, lengths, labels in loader:
    logits = model(tokens.cuda(), lengths)
    loss = nn.functional.cross_entropy(logits, labels.cuda())
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('a packed GRU over lengths a dataset draws is counted at their mean, and the estimate says which figures it took', async () => {
  for (const lengths of ['random.randint(40, LONGEST)', 'int(self.sizes[i])']) {
    const [packed, padded] = await Promise.all([estimateText(reviews(lengths, true), 'packed.py'), estimateText(reviews(lengths, false), 'padded.py')]);
    assert.ok(packed.assumptions.some((a) => a.startsWith('sequences are packed (line ') && a.includes('drawn from 40 to 320 (180 tokens a sample)') && a.includes('the longest, 320')),
      packed.assumptions.join('\n'));
    // Per real token the GRU keeps its packed input (256), its reserve (2 directions x 384 x (6 x 2 layers + 1)) and
    // its packed output (768); packed, a sample holds 180 tokens of them, not 320.
    const perToken = 256 + 2 * 384 * 13 + 768;
    const fewer = 128 * (320 - 180) * perToken * 4;
    const saved = padded.breakdown.activations - packed.breakdown.activations;
    assert.ok(Math.abs(saved - fewer) < 0.1 * fewer, `padded ${padded.breakdown.activations}, packed ${packed.breakdown.activations}: ${saved} fewer, expected about ${fewer}`);
    // The padded output pad_packed_sequence gives back is still counted at 320 tokens (mean() keeps nothing of it,
    // but it is made): the packed estimate is not simply the padded one scaled.
    assert.ok(packed.peakAllocated < padded.peakAllocated, `packed ${packed.peakAllocated}, padded ${padded.peakAllocated}`);
  }
});

const tagger = (lengths: string) => `import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(30000, 200)
        self.lstm = nn.LSTM(200, 384, batch_first=True)
        self.out = nn.Linear(384, 17)

    def forward(self, tokens, lengths):
        x = pack_padded_sequence(self.embed(tokens), lengths.cpu(), batch_first=True, enforce_sorted=False)
        x, _ = self.lstm(x)
        x, _ = pad_packed_sequence(x, batch_first=True)
        return self.out(x)

model = Tagger().cuda()
opt = torch.optim.AdamW(model.parameters())
for step in range(3):
    tokens = torch.randint(0, 30000, (64, 300), device="cuda")
    lengths = ${lengths}
    tags = torch.randint(0, 17, (64, 300), device="cuda")
    loss = nn.functional.cross_entropy(model(tokens, lengths).transpose(1, 2), tags)
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('a lengths tensor the step draws sets the real tokens of a packed LSTM; fixed lengths leave the padded bound', async () => {
  const [drawn, fixed] = await Promise.all([
    estimateText(tagger('torch.randint(100, 301, (64,), device="cuda")'), 'drawn.py'),
    estimateText(tagger('torch.full((64,), 300, device="cuda")'), 'fixed.py'),
  ]);
  assert.ok(drawn.assumptions.some((a) => a.includes('drawn from 100 to 300 (200 tokens a sample)')), drawn.assumptions.join('\n'));
  assert.ok(fixed.assumptions.some((a) => a.includes('an upper bound where the lengths vary')), fixed.assumptions.join('\n'));
  // The LSTM keeps its packed input (200), its reserve (384 x 5) and its packed output (384) per real token.
  const fewer = 64 * (300 - 200) * (200 + 384 * 5 + 384) * 4;
  const saved = fixed.breakdown.activations - drawn.breakdown.activations;
  assert.ok(Math.abs(saved - fewer) < 0.1 * fewer, `fixed ${fixed.breakdown.activations}, drawn ${drawn.breakdown.activations}: ${saved} fewer, expected about ${fewer}`);
});
