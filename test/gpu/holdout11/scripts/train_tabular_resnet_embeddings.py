"""Tabular ResNet (Gorishniy et al. 2021) for click-through prediction: numeric features + 40 categorical
columns with their own embeddings, residual MLP blocks, huge batches."""
from dataclasses import dataclass, field

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


@dataclass
class TabConfig:
    n_num: int = 64
    cat_cardinalities: list = field(default_factory=lambda: [1000] * 30 + [50000] * 10)
    d_embedding: int = 32
    d_main: int = 512
    hidden_factor: int = 4
    n_blocks: int = 8
    activation: str = "ReLU"
    dropout_first: float = 0.25
    dropout_second: float = 0.0
    batch_size: int = 16384
    lr: float = 1e-3
    steps: int = 5

    @property
    def d_in(self) -> int:
        return self.n_num + self.d_embedding * len(self.cat_cardinalities)

    @property
    def d_hidden(self) -> int:
        return self.d_main * self.hidden_factor


class ResBlock(nn.Module):
    def __init__(self, cfg: TabConfig):
        super().__init__()
        act = getattr(nn, cfg.activation)
        self.norm = nn.BatchNorm1d(cfg.d_main)
        self.linear_first = nn.Linear(cfg.d_main, cfg.d_hidden)
        self.activation = act()
        self.dropout_first = nn.Dropout(cfg.dropout_first)
        self.linear_second = nn.Linear(cfg.d_hidden, cfg.d_main)
        self.dropout_second = nn.Dropout(cfg.dropout_second)

    def forward(self, x):
        z = self.dropout_first(self.activation(self.linear_first(self.norm(x))))
        return x + self.dropout_second(self.linear_second(z))


class TabResNet(nn.Module):
    def __init__(self, cfg: TabConfig):
        super().__init__()
        self.embeddings = nn.ModuleList(nn.Embedding(c, cfg.d_embedding) for c in cfg.cat_cardinalities)
        self.first_layer = nn.Linear(cfg.d_in, cfg.d_main)
        self.blocks = nn.Sequential(*[ResBlock(cfg) for _ in range(cfg.n_blocks)])
        self.head = nn.Sequential(nn.BatchNorm1d(cfg.d_main), getattr(nn, cfg.activation)(), nn.Linear(cfg.d_main, 1))

    def forward(self, x_num, x_cat):
        embs = [emb(x_cat[:, i]) for i, emb in enumerate(self.embeddings)]
        x = torch.cat([x_num] + embs, dim=1)
        return self.head(self.blocks(self.first_layer(x))).squeeze(-1)


def main():
    cfg = TabConfig()
    device = "cuda"
    n = cfg.batch_size * cfg.steps
    x_num = torch.randn(n, cfg.n_num)
    x_cat = torch.stack([torch.randint(0, c, (n,)) for c in cfg.cat_cardinalities], dim=1)
    y = (torch.rand(n) < 0.03).float()
    loader = DataLoader(TensorDataset(x_num, x_cat, y), batch_size=cfg.batch_size, shuffle=True, drop_last=True)

    model = TabResNet(cfg).to(device)
    print(f"d_in={cfg.d_in} d_hidden={cfg.d_hidden} params={sum(p.numel() for p in model.parameters()) / 1e6:.1f}M")
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=1e-5)
    pos_weight = torch.tensor([10.0], device=device)

    model.train()
    for step, (xn, xc, yb) in enumerate(loader):
        xn, xc, yb = xn.to(device), xc.to(device), yb.to(device)
        logits = model(xn, xc)
        loss = F.binary_cross_entropy_with_logits(logits, yb, pos_weight=pos_weight)
        optimizer.zero_grad(set_to_none=False)
        loss.backward()
        optimizer.step()
        print(f"step {step} logloss {loss.item():.4f}")

    model.eval()
    preds = []
    with torch.no_grad():
        for xn, xc, _ in loader:
            preds.append(torch.sigmoid(model(xn.to(device), xc.to(device))).cpu())
    print("mean pCTR", torch.cat(preds).mean().item())


if __name__ == "__main__":
    main()
