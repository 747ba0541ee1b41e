"""Multi-task tabular model: shared residual MLP trunk + one head per task (CTR, category, price)."""
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

config = {
    "n_features": 512,
    "n_categorical": 8,
    "cat_cardinality": 10000,
    "cat_dim": 32,
    "width": 4096,
    "depth": 8,
    "dropout": 0.1,
    "tasks": {"ctr": 1, "category": 100, "price": 1},
    "loss_weights": {"ctr": 1.0, "category": 0.5, "price": 0.2},
    "batch_size": 8192,
    "lr": 0.01,
    "steps": 5,
    "eval_batches": 2,
}


class TabularData(Dataset):
    def __init__(self, n, cfg, seed=0):
        rng = np.random.default_rng(seed)
        self.x = torch.from_numpy(rng.standard_normal((n, cfg["n_features"]), dtype=np.float32))
        self.cats = torch.from_numpy(rng.integers(0, cfg["cat_cardinality"], (n, cfg["n_categorical"])))
        self.y_ctr = torch.from_numpy(rng.integers(0, 2, n).astype(np.float32))
        self.y_cat = torch.from_numpy(rng.integers(0, cfg["tasks"]["category"], n))
        self.y_price = torch.from_numpy(rng.lognormal(3.0, 1.0, n).astype(np.float32))

    def __len__(self):
        return self.x.shape[0]

    def __getitem__(self, i):
        return self.x[i], self.cats[i], {"ctr": self.y_ctr[i], "category": self.y_cat[i], "price": self.y_price[i]}


class ResidualMLPBlock(nn.Module):
    def __init__(self, dim, dropout):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, dim)
        self.fc2 = nn.Linear(dim, dim)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        h = self.fc2(self.drop(F.gelu(self.fc1(self.norm(x)))))
        return x + self.drop(h)


class MultiTaskNet(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.embeddings = nn.ModuleList(
            [nn.Embedding(cfg["cat_cardinality"], cfg["cat_dim"]) for _ in range(cfg["n_categorical"])])
        in_dim = cfg["n_features"] + cfg["n_categorical"] * cfg["cat_dim"]
        self.input_proj = nn.Linear(in_dim, cfg["width"])
        self.trunk = nn.Sequential(*[ResidualMLPBlock(cfg["width"], cfg["dropout"]) for _ in range(cfg["depth"])])
        self.final_norm = nn.LayerNorm(cfg["width"])
        self.heads = nn.ModuleDict({
            name: nn.Sequential(nn.Linear(cfg["width"], 256), nn.ReLU(), nn.Linear(256, out))
            for name, out in cfg["tasks"].items()
        })

    def forward(self, x, cats):
        emb = [e(cats[:, i]) for i, e in enumerate(self.embeddings)]
        h = self.input_proj(torch.cat([x] + emb, dim=1))
        h = self.final_norm(self.trunk(h))
        return {name: head(h) for name, head in self.heads.items()}


def compute_losses(out, y):
    return {
        "ctr": F.binary_cross_entropy_with_logits(out["ctr"].squeeze(1), y["ctr"]),
        "category": F.cross_entropy(out["category"], y["category"]),
        "price": F.smooth_l1_loss(out["price"].squeeze(1), torch.log1p(y["price"])),
    }


def to_cuda(x, cats, y):
    return x.cuda(non_blocking=True), cats.cuda(non_blocking=True), {k: v.cuda(non_blocking=True) for k, v in y.items()}


def main():
    torch.manual_seed(0)
    net = MultiTaskNet(config).cuda()
    print("params: %.1fM" % (sum(p.numel() for p in net.parameters()) / 1e6))
    optimizer = torch.optim.Adagrad(net.parameters(), lr=config["lr"], initial_accumulator_value=0.1)

    bs = config["batch_size"]
    train_loader = DataLoader(TabularData(bs * config["steps"], config), batch_size=bs, shuffle=True,
                              pin_memory=True)
    eval_loader = DataLoader(TabularData(bs * config["eval_batches"], config, seed=1), batch_size=bs)

    net.train()
    t0 = time.time()
    for step, (x, cats, y) in enumerate(train_loader):
        x, cats, y = to_cuda(x, cats, y)
        losses = compute_losses(net(x, cats), y)
        total = sum(config["loss_weights"][k] * v for k, v in losses.items())
        optimizer.zero_grad()
        total.backward()
        optimizer.step()
        print(f"step {step}: " + " ".join(f"{k}={v.item():.3f}" for k, v in losses.items())
              + f" ({time.time() - t0:.1f}s)")

    net.eval()
    agg = {k: 0.0 for k in config["tasks"]}
    with torch.no_grad():
        for x, cats, y in eval_loader:
            x, cats, y = to_cuda(x, cats, y)
            for k, v in compute_losses(net(x, cats), y).items():
                agg[k] += v.item() / config["eval_batches"]
    print("eval", agg)


if __name__ == "__main__":
    main()
