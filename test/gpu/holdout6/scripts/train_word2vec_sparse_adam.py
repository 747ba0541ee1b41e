"""Skip-gram with negative sampling: two 1.5M x 300 sparse embedding tables trained with SparseAdam."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

VOCAB_SIZE = 1_500_000
EMB_DIM = 300
NEG = 15
BATCH_SIZE = 8192
WINDOW = 5
STEPS = 20


class SkipGram(nn.Module):
    def __init__(self, vocab_size, dim):
        super().__init__()
        self.in_embed = nn.Embedding(vocab_size, dim, sparse=True)
        self.out_embed = nn.Embedding(vocab_size, dim, sparse=True)
        bound = 0.5 / dim
        nn.init.uniform_(self.in_embed.weight, -bound, bound)
        nn.init.zeros_(self.out_embed.weight)

    def forward(self, center, context, negatives):
        v = self.in_embed(center)                      # B x D
        u = self.out_embed(context)                    # B x D
        n = self.out_embed(negatives)                  # B x K x D
        pos = F.logsigmoid((v * u).sum(-1))
        neg = F.logsigmoid(-torch.bmm(n, v.unsqueeze(2)).squeeze(2)).sum(-1)
        return -(pos + neg).mean()


class Pairs(Dataset):
    """(center, context) pairs; the real one slides a window over a tokenised corpus."""

    def __len__(self):
        return BATCH_SIZE * STEPS

    def __getitem__(self, i):
        c = torch.randint(0, VOCAB_SIZE, ()).item()
        off = torch.randint(1, WINDOW + 1, ()).item()
        return c, min(c + off, VOCAB_SIZE - 1)


# unigram^0.75 noise distribution (Zipf-like counts stand in for the corpus counts)
counts = 1.0 / torch.arange(1, VOCAB_SIZE + 1, dtype=torch.float)
noise = (counts ** 0.75).cuda()
noise /= noise.sum()

model = SkipGram(VOCAB_SIZE, EMB_DIM).cuda()
optimizer = torch.optim.SparseAdam(list(model.parameters()), lr=1e-3)
loader = DataLoader(Pairs(), batch_size=BATCH_SIZE, num_workers=4)

for step, (center, context) in enumerate(loader):
    center, context = center.cuda(), context.cuda()
    negatives = torch.multinomial(noise, center.numel() * NEG, replacement=True).view(-1, NEG)
    loss = model(center, context, negatives)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 5 == 0:
        print(step, loss.item())

emb = F.normalize(model.in_embed.weight[:10000], dim=1)
print("nearest of word 42:", (emb @ emb[42]).topk(5).indices.tolist())
