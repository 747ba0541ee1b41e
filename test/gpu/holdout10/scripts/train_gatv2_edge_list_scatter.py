"""Full-batch node classification on a large synthetic citation-like graph with a hand-written GATv2
(no PyG): messages are gathered along an edge list (src, dst) that is ~10x longer than the node list,
softmax-normalised per destination with scatter_reduce / index_add_, and summed back with index_add_."""
import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

args = argparse.Namespace(
    num_nodes=200_000,
    avg_degree=10,
    in_dim=128,
    hidden=64,
    heads=4,
    num_layers=3,
    num_classes=47,
    dropout=0.3,
    lr=5e-3,
    epochs=10,
    seed=0,
)


def scatter_softmax(scores, index, num_nodes):
    """Softmax of per-edge scores (E, H) over the edges that share a destination node."""
    H = scores.size(1)
    idx = index.unsqueeze(1).expand(-1, H)
    smax = torch.full((num_nodes, H), float("-inf"), device=scores.device, dtype=scores.dtype)
    smax = smax.scatter_reduce(0, idx, scores.detach(), reduce="amax", include_self=True)
    e = (scores - smax.gather(0, idx)).exp()
    denom = torch.zeros((num_nodes, H), device=scores.device, dtype=scores.dtype).index_add_(0, index, e)
    return e / (denom.gather(0, idx) + 1e-16)


class GATv2Layer(nn.Module):
    def __init__(self, in_dim, out_dim, heads, concat=True, dropout=0.0):
        super().__init__()
        self.heads, self.out_dim, self.concat = heads, out_dim, concat
        self.lin_src = nn.Linear(in_dim, heads * out_dim)
        self.lin_dst = nn.Linear(in_dim, heads * out_dim)
        self.att = nn.Parameter(torch.empty(1, heads, out_dim))
        self.bias = nn.Parameter(torch.zeros(heads * out_dim if concat else out_dim))
        self.dropout = dropout
        nn.init.xavier_uniform_(self.att)

    def forward(self, x, edge_index):
        src, dst = edge_index
        N, H, C = x.size(0), self.heads, self.out_dim
        xs = self.lin_src(x).view(N, H, C)
        xd = self.lin_dst(x).view(N, H, C)
        x_j = xs.index_select(0, src)                              # (E, H, C)
        e = F.leaky_relu(x_j + xd.index_select(0, dst), 0.2)        # GATv2: attention after the sum
        alpha = scatter_softmax((e * self.att).sum(-1), dst, N)      # (E, H)
        alpha = F.dropout(alpha, p=self.dropout, training=self.training)
        out = torch.zeros(N, H, C, device=x.device, dtype=x_j.dtype)
        out.index_add_(0, dst, x_j * alpha.unsqueeze(-1))
        out = out.reshape(N, H * C) if self.concat else out.mean(1)
        return out + self.bias


class GAT(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.layers = nn.ModuleList()
        self.norms = nn.ModuleList()
        dim = a.in_dim
        for i in range(a.num_layers - 1):
            self.layers.append(GATv2Layer(dim, a.hidden, a.heads, concat=True, dropout=a.dropout))
            self.norms.append(nn.LayerNorm(a.hidden * a.heads))
            dim = a.hidden * a.heads
        self.layers.append(GATv2Layer(dim, a.num_classes, heads=1, concat=False))
        self.dropout = a.dropout

    def forward(self, x, edge_index):
        for conv, norm in zip(self.layers[:-1], self.norms):
            x = F.dropout(x, self.dropout, self.training)
            x = F.elu(norm(conv(x, edge_index)))
        return self.layers[-1](x, edge_index)


def synthetic_graph(a, device):
    g = torch.Generator().manual_seed(a.seed)
    E = a.num_nodes * a.avg_degree
    src = torch.randint(0, a.num_nodes, (E,), generator=g)
    dst = torch.randint(0, a.num_nodes, (E,), generator=g)
    loops = torch.arange(a.num_nodes)
    edge_index = torch.stack([torch.cat([src, loops]), torch.cat([dst, loops])])
    x = torch.randn(a.num_nodes, a.in_dim, generator=g)
    y = torch.randint(0, a.num_classes, (a.num_nodes,), generator=g)
    perm = torch.randperm(a.num_nodes, generator=g)
    train_idx, val_idx = perm[: a.num_nodes // 2], perm[a.num_nodes // 2:]
    return [t.to(device) for t in (x, y, edge_index, train_idx, val_idx)]


@torch.no_grad()
def evaluate(model, x, edge_index, y, idx):
    model.eval()
    pred = model(x, edge_index).argmax(-1)
    return (pred[idx] == y[idx]).float().mean().item()


def main():
    device = torch.device("cuda")
    x, y, edge_index, train_idx, val_idx = synthetic_graph(args, device)
    print(f"nodes {x.size(0):,}, edges {edge_index.size(1):,}")
    model = GAT(args).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=5e-4, foreach=True)
    t0 = time.time()
    for epoch in range(args.epochs):
        model.train()
        optimizer.zero_grad()
        out = model(x, edge_index)
        loss = F.cross_entropy(out[train_idx], y[train_idx])
        loss.backward()
        optimizer.step()
        if epoch % 3 == 0:
            print(f"epoch {epoch:02d} loss {loss.item():.4f} val acc {evaluate(model, x, edge_index, y, val_idx):.3f}")
    print(f"{time.time() - t0:.1f}s, peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
