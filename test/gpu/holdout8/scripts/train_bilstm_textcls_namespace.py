"""Review rating classifier (5 classes): embedding -> 2-layer BiLSTM -> max+mean pooling -> MLP.

Config is a SimpleNamespace so it prints nicely and can be dumped to the run log.
"""
from types import SimpleNamespace

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

config = SimpleNamespace(
    vocab_size=60000,
    embed_dim=300,
    hidden_size=768,
    num_layers=2,
    dropout=0.3,
    num_classes=5,
    max_len=400,
    batch_size=128,
    lr=1e-3,
    clip=5.0,
    epochs=2,
    steps_per_epoch=4,
    pad_idx=0,
)


class ReviewDataset(Dataset):
    def __init__(self, n, cfg):
        self.cfg = cfg
        self.lengths = torch.randint(cfg.max_len // 4, cfg.max_len + 1, (n,))
        self.lengths[0] = cfg.max_len                       # at least one full-length review
        self.labels = torch.randint(0, cfg.num_classes, (n,))

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        L = int(self.lengths[i])
        ids = torch.randint(1, self.cfg.vocab_size, (L,))
        return ids, self.labels[i]


def pad_to_max_len(batch, max_len=config.max_len, pad_idx=config.pad_idx):
    """Pads every batch to max_len (fixed shapes keep cuDNN happy)."""
    ids = torch.full((len(batch), max_len), pad_idx, dtype=torch.long)
    for j, (seq, _) in enumerate(batch):
        ids[j, : len(seq)] = seq[:max_len]
    labels = torch.stack([b[1] for b in batch])
    return ids, labels


class BiLSTMClassifier(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.embedding = nn.Embedding(cfg.vocab_size, cfg.embed_dim, padding_idx=cfg.pad_idx)
        self.emb_drop = nn.Dropout(cfg.dropout)
        self.lstm = nn.LSTM(cfg.embed_dim, cfg.hidden_size, num_layers=cfg.num_layers, batch_first=True,
                            bidirectional=True, dropout=cfg.dropout)
        self.fc = nn.Sequential(
            nn.Linear(4 * cfg.hidden_size, cfg.hidden_size),
            nn.ReLU(),
            nn.Dropout(cfg.dropout),
            nn.Linear(cfg.hidden_size, cfg.num_classes),
        )

    def forward(self, ids):
        emb = self.emb_drop(self.embedding(ids))
        out, _ = self.lstm(emb)                 # (B, T, 2H)
        pooled = torch.cat([out.max(dim=1).values, out.mean(dim=1)], dim=-1)
        return self.fc(pooled)


def run(cfg):
    device = torch.device("cuda")
    print(cfg)
    model = BiLSTMClassifier(cfg).to(device)
    ds = ReviewDataset(cfg.batch_size * cfg.steps_per_epoch, cfg)
    loader = DataLoader(ds, batch_size=cfg.batch_size, shuffle=True, collate_fn=pad_to_max_len)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    criterion = nn.CrossEntropyLoss()

    for epoch in range(cfg.epochs):
        model.train()
        total, correct, loss_sum = 0, 0, 0.0
        for ids, labels in loader:
            ids, labels = ids.to(device), labels.to(device)
            optimizer.zero_grad()
            logits = model(ids)
            loss = criterion(logits, labels)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), cfg.clip)
            optimizer.step()
            loss_sum += loss.item() * labels.size(0)
            correct += (logits.argmax(1) == labels).sum().item()
            total += labels.size(0)
        print(f"epoch {epoch}: loss {loss_sum / total:.4f} acc {correct / total:.3f}")
    print(f"max mem {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    run(config)
