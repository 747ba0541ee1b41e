"""DCN-v2 (deep & cross network, low-rank cross layers) for click-through-rate prediction.

Settings live in configs/dcn_cfg.py, imported as a module.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, IterableDataset

from configs.dcn_cfg import CFG


class SyntheticClicks(IterableDataset):
    def __init__(self, cfg, n_batches):
        self.cfg, self.n_batches = cfg, n_batches

    def __iter__(self):
        card = torch.tensor(self.cfg.cardinalities)
        for _ in range(self.n_batches):
            dense = torch.randn(self.cfg.batch_size, self.cfg.num_dense)
            sparse = (torch.rand(self.cfg.batch_size, len(card)) * card).long()
            y = (torch.rand(self.cfg.batch_size) < 0.25).float()
            yield dense, sparse, y


class CrossLayerV2(nn.Module):
    def __init__(self, dim, rank):
        super().__init__()
        self.U = nn.Linear(dim, rank, bias=False)
        self.V = nn.Linear(rank, dim)

    def forward(self, x0, x):
        return x0 * self.V(self.U(x)) + x


class DCNv2(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.embeddings = nn.ModuleList([nn.Embedding(c, cfg.embed_dim) for c in cfg.cardinalities])
        in_dim = cfg.num_dense + cfg.embed_dim * len(cfg.cardinalities)
        self.cross = nn.ModuleList([CrossLayerV2(in_dim, cfg.low_rank) for _ in range(cfg.cross_layers)])
        layers, d = [], in_dim
        for h in cfg.deep_layers:
            layers += [nn.Linear(d, h), nn.BatchNorm1d(h), nn.ReLU(), nn.Dropout(cfg.dropout)]
            d = h
        self.deep = nn.Sequential(*layers)
        self.out = nn.Linear(d + in_dim, 1)

    def forward(self, dense, sparse):
        embs = [emb(sparse[:, i]) for i, emb in enumerate(self.embeddings)]
        x0 = torch.cat([dense] + embs, dim=1)
        x = x0
        for layer in self.cross:
            x = layer(x0, x)
        return self.out(torch.cat([x, self.deep(x0)], dim=1)).squeeze(1)


def main():
    device = "cuda"
    model = DCNv2(CFG).to(device)
    print("params: %.1fM" % (sum(p.numel() for p in model.parameters()) / 1e6))
    optimizer = torch.optim.Adam(model.parameters(), lr=CFG.lr)
    loader = DataLoader(SyntheticClicks(CFG, CFG.steps), batch_size=None)
    for step, (dense, sparse, y) in enumerate(loader):
        dense, sparse, y = dense.to(device), sparse.to(device), y.to(device)
        logits = model(dense, sparse)
        loss = F.binary_cross_entropy_with_logits(logits, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 2 == 0:
            print(f"step {step} logloss {loss.item():.4f}")
    print("max allocated %.2f GiB" % (torch.cuda.max_memory_allocated() / 2 ** 30))


if __name__ == "__main__":
    main()
