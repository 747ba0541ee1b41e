"""Biased matrix factorization on MovieLens-1M (explicit ratings), BPR-free baseline."""
import argparse

import pandas as pd
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


# 带偏置项的矩阵分解：r_ui ≈ p_u · q_i + b_u + b_i + μ
class BiasedMF(nn.Module):
    def __init__(self, n_users, n_items, dim=64):
        super().__init__()
        self.user = nn.Embedding(n_users, dim)
        self.item = nn.Embedding(n_items, dim)
        self.user_bias = nn.Embedding(n_users, 1)
        self.item_bias = nn.Embedding(n_items, 1)
        self.global_bias = nn.Parameter(torch.zeros(1))
        for e in (self.user, self.item):
            nn.init.normal_(e.weight, std=0.01)
        nn.init.zeros_(self.user_bias.weight)
        nn.init.zeros_(self.item_bias.weight)

    def forward(self, u, i):
        dot = (self.user(u) * self.item(i)).sum(-1)
        return dot + self.user_bias(u).squeeze(-1) + self.item_bias(i).squeeze(-1) + self.global_bias


def load(path):
    df = pd.read_csv(path, sep="::", engine="python", names=["user", "item", "rating", "ts"])
    df["user"] = df["user"].astype("category").cat.codes
    df["item"] = df["item"].astype("category").cat.codes
    df = df.sample(frac=1.0, random_state=0)
    n = int(0.9 * len(df))
    to_t = lambda d: TensorDataset(torch.tensor(d["user"].values, dtype=torch.long),
                                   torch.tensor(d["item"].values, dtype=torch.long),
                                   torch.tensor(d["rating"].values, dtype=torch.float32))
    return to_t(df[:n]), to_t(df[n:]), df["user"].max() + 1, df["item"].max() + 1


def rmse(model, loader, device):
    model.eval()
    se, n = 0.0, 0
    with torch.no_grad():
        for u, i, r in loader:
            pred = model(u.to(device), i.to(device)).clamp(1, 5)
            se += ((pred - r.to(device)) ** 2).sum().item()
            n += r.numel()
    return (se / n) ** 0.5


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ratings", default="ml-1m/ratings.dat")
    ap.add_argument("--epochs", type=int, default=25)
    ap.add_argument("--wd", type=float, default=1e-5)
    args = ap.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    train_ds, test_ds, n_users, n_items = load(args.ratings)
    train_dl = DataLoader(train_ds, batch_size=4096, shuffle=True)
    test_dl = DataLoader(test_ds, batch_size=16384)

    model = BiasedMF(n_users, n_items).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-3, weight_decay=args.wd)
    scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.95)
    norms = []

    for epoch in range(args.epochs):
        model.train()
        total, count = 0.0, 0
        for u, i, r in train_dl:
            u, i, r = u.to(device), i.to(device), r.to(device)
            pred = model(u, i)
            loss = ((pred - r) ** 2).mean()
            loss.backward()
            optimizer.step()  # expect: OOM103
            total += loss.item() * r.numel()
            count += r.numel()
        scheduler.step()
        norms.append(model.user.weight.norm().item())  # 记录用户向量的范数，观察是否过拟合
        print(f"epoch {epoch}: train rmse {(total / count) ** 0.5:.4f} test rmse {rmse(model, test_dl, device):.4f}")

    torch.save(model.state_dict(), "mf_ml1m.pt")


if __name__ == "__main__":
    main()
