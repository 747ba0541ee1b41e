#!/usr/bin/env python
"""Graph classification with a dense-adjacency GCN (padded batches of graphs, like a DiffPool-style pipeline).

Run in a notebook too, hence parse_args([]) below -- edit the defaults instead of passing flags.
"""
import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--num-nodes", type=int, default=512, help="max nodes per graph (padded)")
    p.add_argument("--in-feats", type=int, default=128)
    p.add_argument("--hidden", type=int, default=1024)
    p.add_argument("--layers", type=int, default=6)
    p.add_argument("--classes", type=int, default=10)
    p.add_argument("--bs", type=int, default=128, dest="batch_size")
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--edge-prob", type=float, default=0.02)
    return p.parse_args([])


class RandomGraphs(Dataset):
    """Erdos-Renyi graphs with a random number of real nodes, padded to num_nodes."""

    def __init__(self, n_graphs, num_nodes, in_feats, classes, edge_prob):
        self.n_graphs, self.num_nodes, self.in_feats = n_graphs, num_nodes, in_feats
        self.classes, self.edge_prob = classes, edge_prob

    def __len__(self):
        return self.n_graphs

    def __getitem__(self, i):
        n = self.num_nodes
        real = torch.randint(n // 2, n + 1, ()).item()
        adj = (torch.rand(n, n) < self.edge_prob).float()
        adj = torch.triu(adj, 1)
        adj = adj + adj.t()
        mask = torch.zeros(n)
        mask[:real] = 1
        adj = adj * mask[:, None] * mask[None, :]
        x = torch.randn(n, self.in_feats) * mask[:, None]
        return x, adj, mask, torch.randint(self.classes, ()).item()


def normalize_adj(adj):
    # A_hat = D^-1/2 (A + I) D^-1/2
    eye = torch.eye(adj.size(-1), device=adj.device, dtype=adj.dtype)
    a = adj + eye
    d = a.sum(-1).clamp(min=1).pow(-0.5)
    return d.unsqueeze(-1) * a * d.unsqueeze(-2)


class GraphConv(nn.Module):
    def __init__(self, in_dim, out_dim, residual=True):
        super().__init__()
        self.lin = nn.Linear(in_dim, out_dim)
        self.norm = nn.LayerNorm(out_dim)
        self.residual = residual and in_dim == out_dim

    def forward(self, x, a_hat):
        h = torch.matmul(a_hat, self.lin(x))
        h = F.gelu(self.norm(h))
        return x + h if self.residual else h


class GCN(nn.Module):
    def __init__(self, in_feats, hidden, n_layers, n_classes):
        super().__init__()
        dims = [in_feats]
        for i in range(n_layers):
            # last two layers narrower
            dims.append(hidden if i < n_layers - 2 else hidden // 2)
        self.convs = nn.ModuleList(GraphConv(dims[i], dims[i + 1]) for i in range(n_layers))
        self.readout = nn.Sequential(nn.Linear(2 * dims[-1], hidden), nn.GELU(), nn.Dropout(0.2),
                                     nn.Linear(hidden, n_classes))

    def forward(self, x, adj, mask):
        a_hat = normalize_adj(adj)
        for conv in self.convs:
            x = conv(x, a_hat) * mask.unsqueeze(-1)
        denom = mask.sum(1, keepdim=True).clamp(min=1)
        mean = x.sum(1) / denom
        mx = x.masked_fill(mask.unsqueeze(-1) == 0, -1e4).max(1).values
        return self.readout(torch.cat([mean, mx], dim=-1))


def main():
    args = get_args()
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = GCN(args.in_feats, args.hidden, args.layers, args.classes).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 0.5 * (1 + math.cos(math.pi * s / args.steps)))
    data = RandomGraphs(args.batch_size * args.steps, args.num_nodes, args.in_feats, args.classes, args.edge_prob)
    loader = DataLoader(data, batch_size=args.batch_size, num_workers=4, drop_last=True)

    model.train()
    for step, (x, adj, mask, y) in enumerate(loader):
        x, adj, mask, y = x.to(dev), adj.to(dev), mask.to(dev), y.to(dev)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model(x, adj, mask)
            loss = F.cross_entropy(out, y)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
        sched.step()
        print(f"[{step}] loss={loss.item():.4f} lr={sched.get_last_lr()[0]:.4f}")

    print(f"peak {torch.cuda.max_memory_allocated() / 1024**3:.2f} GiB")


if __name__ == "__main__":
    main()
