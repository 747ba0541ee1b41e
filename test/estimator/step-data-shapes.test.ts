// The step's data shapes as the script makes them: a collate_fn that pads each batch of spectrograms to its longest
// (the longest a draw can give), nn.MultiheadAttention's need_weights path under autocast (softmax's fp32 output),
// and one hub encoder run on two inputs of different lengths in one forward (a retriever's queries and passages).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';

/** A speech recognizer whose collate_fn pads each batch of (features, frames) spectrograms to the longest. */
const speech = (shortest: number, longest: number) => `import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
from torch.utils.data import DataLoader, Dataset

FEATURES = 80
SHORTEST = ${shortest}
LONGEST = ${longest}

class Utterances(Dataset):
    def __len__(self):
        return 256

    def __getitem__(self, i):
        frames = int(torch.randint(SHORTEST, LONGEST + 1, (1,)))
        return torch.randn(FEATURES, frames), torch.randint(1, 30, (frames // 8,))

def pad_batch(items):
    feats, labels = zip(*items)
    lengths = torch.tensor([f.shape[1] for f in feats])
    x = torch.zeros(len(feats), 1, FEATURES, int(lengths.max()))
    for i, f in enumerate(feats):
        x[i, 0, :, : f.shape[1]] = f
    return x, lengths, torch.cat(labels), torch.tensor([len(l) for l in labels])

class Recognizer(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(1, 16, 3, stride=2, padding=1), nn.ReLU())
        self.rnn = nn.GRU(16 * 40, 256, num_layers=3, bidirectional=True)
        self.fc = nn.Linear(512, 30)

    def forward(self, x, lengths):
        x = self.conv(x)
        b, c, f, t = x.shape
        x = x.view(b, c * f, t).permute(2, 0, 1)
        out_lengths = (lengths - 1) // 2 + 1
        y, _ = self.rnn(pack_padded_sequence(x, out_lengths.cpu(), enforce_sorted=False))
        y, _ = pad_packed_sequence(y, total_length=t)
        return self.fc(y), out_lengths

model = Recognizer().cuda()
opt = torch.optim.Adam(model.parameters())
loader = DataLoader(Utterances(), batch_size=16, collate_fn=pad_batch)
for step, (x, lengths, targets, target_lengths) in enumerate(loader):
    logits, out_lengths = model(x.cuda(), lengths.cuda())
    loss = F.ctc_loss(logits.log_softmax(-1), targets.cuda(), out_lengths, target_lengths.cuda())
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('a collate_fn padding spectrograms to the batch\'s longest gives the step its input, at the longest a draw gives', async () => {
  const [short, long] = await Promise.all([estimateText(speech(300, 900), 'short.py'), estimateText(speech(600, 1800), 'long.py')]);
  for (const result of [short, long]) {
    assert.ok(!result.assumptions.some((a) => a.startsWith('image size not found')), result.assumptions.join('\n'));
  }
  // The GRU runs packed over the frames the stem's stride leaves: the draw told on that axis, at its mean.
  assert.ok(short.assumptions.some((a) => a.includes('lengths drawn from 150 to 450 (300 tokens a sample); the padded tensors at the longest, 450')),
    short.assumptions.join('\n'));
  // Every tensor of the step follows the frames: twice the frames, about twice the activations.
  const ratio = long.breakdown.activations / short.breakdown.activations;
  assert.ok(ratio > 1.8 && ratio < 2.2, `activations ${short.breakdown.activations} at 900 frames, ${long.breakdown.activations} at 1800 (x${ratio.toFixed(2)})`);
});

const BATCH = 4;
const HEADS = 8;
const TOKENS = 1024;

/** Blocks of nn.MultiheadAttention under bf16 autocast, with or without need_weights (default: True). */
const attention = (needWeights: string) => `import torch
import torch.nn as nn

class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, dropout=0.1, batch_first=True)

    def forward(self, x, mask):
        h = self.norm(x)
        a, _ = self.attn(h, h, h, attn_mask=mask${needWeights})
        return x + a

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(512, 512)
        self.blocks = nn.ModuleList([Block(512, ${HEADS}) for _ in range(2)])
        self.head = nn.Linear(512, 512)

    def forward(self, idx):
        T = idx.shape[1]
        mask = torch.triu(torch.ones(T, T, dtype=torch.bool, device=idx.device), diagonal=1)
        x = self.embed(idx)
        for block in self.blocks:
            x = block(x, mask)
        return self.head(x)

model = Net().cuda()
opt = torch.optim.AdamW(model.parameters())
for step in range(10):
    idx = torch.randint(0, 512, (${BATCH}, ${TOKENS}), device="cuda")
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = nn.functional.cross_entropy(model(idx).flatten(0, 1), idx.flatten())
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('nn.MultiheadAttention with need_weights keeps softmax\'s fp32 weights under autocast, their dropout mask and half copy', async () => {
  const [weights, none] = await Promise.all([estimateText(attention(''), 'weights.py'), estimateText(attention(', need_weights=False'), 'fused.py')]);
  // Per block and (batch, head, query, key) element: softmax's fp32 output (4 bytes), the dropout mask (1) and the
  // half copy of the dropped weights the product with the values keeps (2).
  const perBlock = BATCH * HEADS * TOKENS * TOKENS * 7;
  const more = weights.breakdown.activations - none.breakdown.activations;
  assert.ok(more > 2 * perBlock * 0.95 && more < 2 * perBlock * 1.2, `need_weights keeps ${more} more, expected about ${2 * perBlock}`);
  // Backward then holds two gradients of one block's weights beside them (fp32, 8 bytes; counted as the layer's
  // backward workspace, at the activations' 2 bytes an element each under autocast where no checkpointing cuts).
  assert.ok(weights.peakAllocated - none.peakAllocated > more + BATCH * HEADS * TOKENS * TOKENS * 4 * 0.9,
    `peaks ${weights.peakAllocated} and ${none.peakAllocated}`);
});

/** A retriever that encodes queries and passages of their own lengths with one hub encoder. */
const retriever = (passageTokens: number) => `import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from transformers import AutoModel

QUERY_TOKENS = 24
PASSAGE_TOKENS = ${passageTokens}

class Pairs(Dataset):
    def __len__(self):
        return 512

    def __getitem__(self, i):
        return torch.randint(1000, 30000, (QUERY_TOKENS,)), torch.randint(1000, 30000, (PASSAGE_TOKENS,))

class Retriever(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = AutoModel.from_pretrained("bert-base-uncased")

    def embed(self, ids):
        return F.normalize(self.encoder(input_ids=ids).last_hidden_state[:, 0], dim=-1)

    def forward(self, queries, passages):
        return self.embed(queries) @ self.embed(passages).T

model = Retriever().cuda()
opt = torch.optim.AdamW(model.parameters(), lr=2e-5)
loader = DataLoader(Pairs(), batch_size=32)
for step, (queries, passages) in enumerate(loader):
    scores = model(queries.cuda(), passages.cuda())
    loss = F.cross_entropy(scores, torch.arange(scores.shape[0], device="cuda"))
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('a hub encoder run on queries and on longer passages in one forward is counted at both lengths', async () => {
  // The same encoder run twice at 160 tokens (the length given): two whole batches of it.
  const [mixed, twice] = await Promise.all([estimateText(retriever(160), 'mixed.py'), estimateText(retriever(24), 'twice.py', { seqLen: 160 })]);
  assert.ok(mixed.assumptions.some((a) => a.includes('on 24 + 160 tokens: counted at 160 tokens, as 1.15 of its batches')), mixed.assumptions.join('\n'));
  assert.ok(!mixed.assumptions.some((a) => a.startsWith('seq_len not found')), mixed.assumptions.join('\n'));
  assert.equal(mixed.detected.seqLen?.value, 160);
  assert.ok(twice.assumptions.some((a) => a.startsWith('the model is called 2 times before one backward')), twice.assumptions.join('\n'));
  // (24 + 160) tokens a sample against 2 x 160: about 0.58 of the activations.
  const ratio = mixed.breakdown.activations / twice.breakdown.activations;
  assert.ok(ratio > 0.5 && ratio < 0.65, `activations ${mixed.breakdown.activations} vs ${twice.breakdown.activations} (x${ratio.toFixed(2)})`);
});
