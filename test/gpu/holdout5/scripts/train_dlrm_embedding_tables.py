"""DLRM-style click-through-rate model: 13 dense features, 8 categorical features with big embedding tables,
dot-product feature interaction, top MLP. Synthetic Criteo-like data."""
import itertools

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

DENSE_FEATURES = 13
TABLE_SIZES = [2_000_000, 1_000_000, 500_000, 100_000, 50_000, 20_000, 10_000, 5_000]
EMB_DIM = 64
BOTTOM_MLP = [512, 256, EMB_DIM]
TOP_MLP = [1024, 512, 256, 1]
BATCH_SIZE = 2048
LR = 1e-3
MAX_STEPS = 6


def mlp(sizes, sigmoid_last=False):
    layers = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers.append(nn.Linear(a, b))
        if i < len(sizes) - 2:
            layers.append(nn.ReLU())
    if sigmoid_last:
        layers.append(nn.Sigmoid())
    return nn.Sequential(*layers)


class DLRM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embeddings = nn.ModuleList([nn.Embedding(n, EMB_DIM) for n in TABLE_SIZES])
        self.bottom = mlp([DENSE_FEATURES] + BOTTOM_MLP)
        n_vec = len(TABLE_SIZES) + 1
        n_inter = n_vec * (n_vec - 1) // 2
        self.top = mlp([EMB_DIM + n_inter] + TOP_MLP)
        self.triu = list(itertools.combinations(range(n_vec), 2))

    def forward(self, dense, sparse):
        d = self.bottom(dense)                                   # B x D
        embs = [emb(sparse[:, i]) for i, emb in enumerate(self.embeddings)]
        T = torch.stack([d] + embs, dim=1)                       # B x F x D
        Z = torch.bmm(T, T.transpose(1, 2))                      # B x F x F
        li = torch.tensor([i for i, _ in self.triu], device=Z.device)
        lj = torch.tensor([j for _, j in self.triu], device=Z.device)
        inter = Z[:, li, lj]
        return self.top(torch.cat([d, inter], dim=1)).squeeze(1)


class ClickLogs(Dataset):
    def __init__(self, n):
        rng = np.random.default_rng(0)
        self.dense = np.log1p(rng.exponential(5.0, size=(n, DENSE_FEATURES))).astype(np.float32)
        self.sparse = np.stack([rng.integers(0, s, size=n) for s in TABLE_SIZES], axis=1).astype(np.int64)
        self.label = (rng.random(n) < 0.25).astype(np.float32)

    def __len__(self):
        return len(self.label)

    def __getitem__(self, i):
        return self.dense[i], self.sparse[i], self.label[i]


def main():
    dev = torch.device("cuda")
    model = DLRM().to(dev)
    print("params:", sum(p.numel() for p in model.parameters()))
    opt = torch.optim.Adam(model.parameters(), lr=LR)
    crit = nn.BCEWithLogitsLoss()
    loader = DataLoader(ClickLogs(BATCH_SIZE * MAX_STEPS), batch_size=BATCH_SIZE, shuffle=True)

    step = 0
    model.train()
    for dense, sparse, label in loader:
        dense, sparse, label = dense.to(dev), sparse.to(dev), label.to(dev)
        logit = model(dense, sparse)
        loss = crit(logit, label)
        opt.zero_grad()
        loss.backward()
        opt.step()
        step += 1
        print(f"step {step} logloss {loss.item():.4f}")
        if step == MAX_STEPS:
            break


if __name__ == "__main__":
    main()
