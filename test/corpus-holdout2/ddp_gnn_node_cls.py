# torchrun --nproc_per_node=2 ddp_gnn_node_cls.py --init runs/pretrain.pt
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP


class GCNLayer(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.lin = nn.Linear(d_in, d_out)

    def forward(self, x, adj):
        return torch.sparse.mm(adj, self.lin(x))


class GCN(nn.Module):
    def __init__(self, d_in, hidden, n_classes, n_layers=3, dropout=0.5):
        super().__init__()
        dims = [d_in] + [hidden] * (n_layers - 1) + [n_classes]
        self.layers = nn.ModuleList([GCNLayer(a, b) for a, b in zip(dims[:-1], dims[1:])])
        self.dropout = dropout

    def forward(self, x, adj):
        for i, layer in enumerate(self.layers):
            x = layer(x, adj)
            if i < len(self.layers) - 1:
                x = F.dropout(F.relu(x), self.dropout, self.training)
        return x


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--graph", default="data/ogbn_arxiv.pt")
    ap.add_argument("--init", default="")
    ap.add_argument("--epochs", type=int, default=500)
    args = ap.parse_args()

    local_rank = int(os.environ["LOCAL_RANK"])
    dist.init_process_group("nccl")
    rank = dist.get_rank()

    g = torch.load(args.graph, map_location="cpu")
    x, adj, y = g["x"], g["adj"], g["y"]
    train_idx = g["train_idx"].chunk(dist.get_world_size())[rank]
    val_idx = g["val_idx"]

    model = GCN(x.size(1), 256, int(y.max()) + 1).to("cuda")  # expect: OOM111
    if args.init:
        model.load_state_dict(torch.load(args.init))  # expect: OOM110
    model = DDP(model, device_ids=[local_rank])
    x, adj, y = x.to(local_rank), adj.to(local_rank), y.to(local_rank)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)

    for epoch in range(args.epochs):
        model.train()
        optimizer.zero_grad()
        out = model(x, adj)
        loss = F.cross_entropy(out[train_idx], y[train_idx])
        loss.backward()
        optimizer.step()

        if epoch % 10 == 0 and rank == 0:
            model.eval()
            with torch.no_grad():
                pred = model.module(x, adj).argmax(-1)
                acc = (pred[val_idx] == y[val_idx]).float().mean().item()
            print(f"epoch {epoch}: loss {loss.item():.4f} val acc {acc:.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
