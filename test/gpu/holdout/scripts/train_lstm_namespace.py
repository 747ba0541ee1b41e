"""BiLSTM sentiment classifier (Yelp-5 style), fp32, Adam."""
from types import SimpleNamespace

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

cfg = SimpleNamespace(
    vocab_size=50000,
    embed_dim=300,
    hidden_size=512,
    num_layers=2,
    bidirectional=True,
    dropout=0.3,
    num_classes=5,
    batch_size=128,
    max_len=400,
    epochs=1,
    lr=1e-3,
    clip=5.0,
    n_train_batches=5,
    n_val_batches=2,
)


class TextClassifier(nn.Module):
    def __init__(self, vocab_size, embed_dim, hidden_size, num_layers, num_classes, bidirectional=True,
                 dropout=0.0, pad_idx=0):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_dim, padding_idx=pad_idx)
        self.lstm = nn.LSTM(
            embed_dim,
            hidden_size,
            num_layers=num_layers,
            bidirectional=bidirectional,
            batch_first=True,
            dropout=dropout if num_layers > 1 else 0.0,
        )
        factor = 2 if bidirectional else 1
        self.dropout = nn.Dropout(dropout)
        self.fc = nn.Linear(hidden_size * factor, num_classes)

    def forward(self, x):
        emb = self.dropout(self.embedding(x))
        out, (h, c) = self.lstm(emb)
        # last layer, forward and backward final states
        h = torch.cat([h[-2], h[-1]], dim=1)
        return self.fc(self.dropout(h))


def make_loader(n_batches, shuffle):
    n = n_batches * cfg.batch_size
    x = torch.randint(1, cfg.vocab_size, (n, cfg.max_len))
    y = torch.randint(0, cfg.num_classes, (n,))
    return DataLoader(TensorDataset(x, y), batch_size=cfg.batch_size, shuffle=shuffle)


def main():
    device = torch.device("cuda")
    model = TextClassifier(cfg.vocab_size, cfg.embed_dim, cfg.hidden_size, cfg.num_layers, cfg.num_classes,
                           bidirectional=cfg.bidirectional, dropout=cfg.dropout).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    criterion = nn.CrossEntropyLoss()
    train_loader = make_loader(cfg.n_train_batches, True)
    val_loader = make_loader(cfg.n_val_batches, False)

    for epoch in range(cfg.epochs):
        model.train()
        for i, (x, y) in enumerate(train_loader):
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            logits = model(x)
            loss = criterion(logits, y)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), cfg.clip)
            optimizer.step()
            print(f"epoch {epoch} batch {i} loss {loss.item():.4f}")

        model.eval()
        preds, golds = [], []
        with torch.no_grad():
            for x, y in val_loader:
                logits = model(x.to(device))
                preds.append(logits.argmax(-1).cpu())
                golds.append(y)
        acc = (torch.cat(preds) == torch.cat(golds)).float().mean().item()
        print(f"epoch {epoch} val acc {acc:.3f}")


if __name__ == "__main__":
    main()
