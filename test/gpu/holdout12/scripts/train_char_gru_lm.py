"""Character-level language model: embedding -> 3-layer GRU -> linear, trained with Adam and clipping."""
import string
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

VOCAB = string.printable  # 100 characters


class CharDataset(Dataset):
    def __init__(self, text_ids, seq_len):
        self.data, self.seq_len = text_ids, seq_len

    def __len__(self):
        return (len(self.data) - 1) // self.seq_len

    def __getitem__(self, i):
        chunk = self.data[i * self.seq_len:(i + 1) * self.seq_len + 1]
        return chunk[:-1], chunk[1:]


class CharGRU(nn.Module):
    def __init__(self, vocab_size, embed_dim, hidden_size, num_layers, dropout):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, embed_dim)
        self.gru = nn.GRU(embed_dim, hidden_size, num_layers=num_layers, dropout=dropout, batch_first=True)
        self.drop = nn.Dropout(dropout)
        self.fc = nn.Linear(hidden_size, vocab_size)

    def forward(self, x, h=None):
        out, h = self.gru(self.embed(x), h)
        return self.fc(self.drop(out)), h


def train(seq_len=512, batch_size=128, embed_dim=256, hidden_size=1536, num_layers=3, dropout=0.2, lr=2e-3,
          epochs=2, max_batches=4):
    device = torch.device("cuda")
    text = torch.randint(0, len(VOCAB), (batch_size * seq_len * max_batches + 1,))
    loader = DataLoader(CharDataset(text, seq_len), batch_size=batch_size, shuffle=True, drop_last=True)
    model = CharGRU(len(VOCAB), embed_dim, hidden_size, num_layers, dropout).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    crit = nn.CrossEntropyLoss()
    for epoch in range(epochs):
        t0 = time.time()
        for b, (x, y) in enumerate(loader):
            x, y = x.to(device), y.to(device)
            logits, _ = model(x)
            loss = crit(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            opt.step()
            print(f"epoch {epoch} batch {b} loss {loss.item():.3f}")
        print(f"epoch {epoch} took {time.time() - t0:.1f}s")
    return model


if __name__ == "__main__":
    train()
    print("peak %.2f GiB" % (torch.cuda.max_memory_allocated() / 2 ** 30))
