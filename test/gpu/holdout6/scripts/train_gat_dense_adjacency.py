"""Hand-written multi-head GAT over dense adjacency matrices (mesh graphs of 4096 nodes, 2 graphs a batch).
Attention logits are B x H x N x N; masked with the adjacency before the softmax."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class GATLayer(nn.Module):
    def __init__(self, in_dim, out_dim, heads, concat=True, dropout=0.1, alpha=0.2):
        super().__init__()
        self.heads, self.out_dim, self.concat = heads, out_dim, concat
        self.W = nn.Linear(in_dim, heads * out_dim, bias=False)
        self.a_src = nn.Parameter(torch.empty(heads, out_dim))
        self.a_dst = nn.Parameter(torch.empty(heads, out_dim))
        nn.init.xavier_uniform_(self.a_src)
        nn.init.xavier_uniform_(self.a_dst)
        self.leaky = nn.LeakyReLU(alpha)
        self.drop = nn.Dropout(dropout)

    def forward(self, h, adj):                                  # h: B x N x F, adj: B x N x N (0/1)
        B, N, _ = h.shape
        Wh = self.W(h).view(B, N, self.heads, self.out_dim)      # B x N x H x D
        e_src = (Wh * self.a_src).sum(-1)                        # B x N x H
        e_dst = (Wh * self.a_dst).sum(-1)
        e = self.leaky(e_src.permute(0, 2, 1).unsqueeze(-1) + e_dst.permute(0, 2, 1).unsqueeze(-2))  # B x H x N x N
        e = e.masked_fill(adj.unsqueeze(1) == 0, float("-inf"))
        att = self.drop(torch.softmax(e, dim=-1))
        out = torch.matmul(att, Wh.permute(0, 2, 1, 3))          # B x H x N x D
        out = out.permute(0, 2, 1, 3)
        return out.reshape(B, N, -1) if self.concat else out.mean(dim=2)


class GAT(nn.Module):
    def __init__(self, in_dim, hidden, heads, num_layers, num_classes):
        super().__init__()
        dims = [in_dim] + [hidden * heads] * (num_layers - 1)
        self.layers = nn.ModuleList([GATLayer(dims[i], hidden, heads) for i in range(num_layers - 1)])
        self.out = GATLayer(dims[-1], num_classes, 1, concat=False)

    def forward(self, x, adj):
        for layer in self.layers:
            x = F.elu(layer(x, adj))
        return self.out(x, adj)


class MeshGraphs(Dataset):
    def __init__(self, n, nodes, feats, classes, degree=16):
        self.n, self.nodes, self.feats, self.classes, self.degree = n, nodes, feats, classes, degree

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        adj = (torch.rand(self.nodes, self.nodes) < self.degree / self.nodes).float()
        adj = ((adj + adj.t() + torch.eye(self.nodes)) > 0).float()
        return torch.randn(self.nodes, self.feats), adj, torch.randint(0, self.classes, (self.nodes,))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--nodes", type=int, default=4096)
    p.add_argument("--in-dim", type=int, default=128)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--layers", type=int, default=3)
    p.add_argument("--classes", type=int, default=16)
    p.add_argument("--batch-size", type=int, default=2)
    p.add_argument("--steps", type=int, default=8)
    args = p.parse_args()

    model = GAT(args.in_dim, args.hidden, args.heads, args.layers, args.classes).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=5e-3, weight_decay=5e-4)
    loader = DataLoader(MeshGraphs(args.batch_size * args.steps, args.nodes, args.in_dim, args.classes),
                        batch_size=args.batch_size, num_workers=2)
    model.train()
    for step, (x, adj, y) in enumerate(loader):
        x, adj, y = x.cuda(), adj.cuda(), y.cuda()
        logits = model(x, adj)
        loss = F.cross_entropy(logits.reshape(-1, args.classes), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
