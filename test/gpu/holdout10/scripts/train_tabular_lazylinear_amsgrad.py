"""Credit-default tabular model: categorical embeddings + numeric features into an MLP made of
nn.LazyLinear layers (no need to work out the concatenated width by hand)."""
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

CARDINALITIES = [12, 7, 31, 24, 4, 1000, 250, 53, 3, 9, 18, 600, 45, 2, 5, 120, 77, 8, 15, 3000]
N_NUMERIC = 40


def emb_dim(card):
    return int(min(50, (card + 1) // 2))


class TabularSet(Dataset):
    def __init__(self, n):
        rng = np.random.default_rng(0)
        self.cat = np.stack([rng.integers(0, c, n) for c in CARDINALITIES], axis=1).astype(np.int64)
        self.num = rng.normal(size=(n, N_NUMERIC)).astype(np.float32)
        self.y = (rng.random(n) < 0.2).astype(np.float32)

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return torch.from_numpy(self.cat[i]), torch.from_numpy(self.num[i]), torch.tensor(self.y[i])


class TabularNet(nn.Module):
    def __init__(self, hidden=(2048, 1024, 512), dropout=0.2):
        super().__init__()
        self.embs = nn.ModuleList([nn.Embedding(c, emb_dim(c)) for c in CARDINALITIES])
        self.num_bn = nn.BatchNorm1d(N_NUMERIC)
        layers = []
        for h in hidden:
            layers += [nn.LazyLinear(h), nn.BatchNorm1d(h), nn.ReLU(inplace=True), nn.Dropout(dropout)]
        layers.append(nn.LazyLinear(1))
        self.mlp = nn.Sequential(*layers)

    def forward(self, cat, num):
        x = torch.cat([emb(cat[:, i]) for i, emb in enumerate(self.embs)] + [self.num_bn(num)], dim=1)
        return self.mlp(x).squeeze(1)


def main(batch_size=32768, epochs=2, lr=2e-3, hidden=(2048, 1024, 512)):
    device = "cuda"
    ds = TabularSet(batch_size * 4)
    loader = DataLoader(ds, batch_size=batch_size, shuffle=True, drop_last=True, num_workers=2)
    model = TabularNet(hidden=hidden).to(device)
    # materialise the lazy layers with one dry batch before building the optimizer
    cat0, num0, _ = next(iter(loader))
    with torch.no_grad():
        model(cat0[:2].to(device), num0[:2].to(device))
    print("params:", sum(p.numel() for p in model.parameters()))

    opt = torch.optim.Adam(model.parameters(), lr=lr, amsgrad=True, weight_decay=1e-5)
    pos_weight = torch.tensor(4.0, device=device)
    loss_fn = nn.BCEWithLogitsLoss(pos_weight=pos_weight)
    for epoch in range(epochs):
        model.train()
        for cat, num, y in loader:
            cat, num, y = cat.to(device), num.to(device), y.to(device)
            logits = model(cat, num)
            loss = loss_fn(logits, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(f"epoch {epoch} loss {loss.item():.4f}")
    print("max_memory_allocated GiB", torch.cuda.max_memory_allocated() / 2**30)


if __name__ == "__main__":
    main()
