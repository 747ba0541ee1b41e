"""Document classifier: BiGRU over padded sequences with pack_padded_sequence, additive attention pooling,
gradient clipping. Variable-length reviews (50..400 tokens) padded per batch by the collate function.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence
from torch.utils.data import DataLoader, Dataset

VOCAB_SIZE = 200000
EMBED_DIM = 300
HIDDEN = 512
NUM_LAYERS = 2
NUM_CLASSES = 5
BATCH_SIZE = 256
MAX_LEN = 400
EPOCHS = 1
MAX_BATCHES = 6


class Reviews(Dataset):
    def __init__(self, n):
        self.lengths = torch.randint(50, MAX_LEN + 1, (n,))
        self.lengths[::BATCH_SIZE] = MAX_LEN   # at least one full-length review per batch
        self.labels = torch.randint(0, NUM_CLASSES, (n,))

    def __len__(self):
        return len(self.lengths)

    def __getitem__(self, i):
        return torch.randint(1, VOCAB_SIZE, (int(self.lengths[i]),)), self.labels[i]


def collate(batch):
    seqs, labels = zip(*batch)
    lengths = torch.tensor([len(s) for s in seqs])
    return pad_sequence(seqs, batch_first=True, padding_value=0), lengths, torch.stack(labels)


class AttnGRU(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB_SIZE, EMBED_DIM, padding_idx=0)
        self.gru = nn.GRU(EMBED_DIM, HIDDEN, num_layers=NUM_LAYERS, batch_first=True, bidirectional=True, dropout=0.3)
        self.att = nn.Sequential(nn.Linear(2 * HIDDEN, 256), nn.Tanh(), nn.Linear(256, 1, bias=False))
        self.fc = nn.Sequential(nn.Dropout(0.3), nn.Linear(2 * HIDDEN, NUM_CLASSES))

    def forward(self, x, lengths):
        e = self.emb(x)
        packed = pack_padded_sequence(e, lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, _ = self.gru(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=x.shape[1])
        scores = self.att(out).squeeze(-1)
        mask = torch.arange(x.shape[1], device=x.device)[None] < lengths.to(x.device)[:, None]
        scores = scores.masked_fill(~mask, float("-inf"))
        w = torch.softmax(scores, dim=1)
        return self.fc((w.unsqueeze(-1) * out).sum(1))


device = torch.device("cuda")
model = AttnGRU().to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
loader = DataLoader(Reviews(BATCH_SIZE * MAX_BATCHES), batch_size=BATCH_SIZE, collate_fn=collate)

for epoch in range(EPOCHS):
    model.train()
    for i, (x, lengths, y) in enumerate(loader):
        x, y = x.to(device), y.to(device)
        logits = model(x, lengths)
        loss = F.cross_entropy(logits, y)
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), max_norm=5.0)
        optimizer.step()
        print(f"epoch {epoch} batch {i} loss {loss.item():.4f}")
