"""R-GCN encoder (basis decomposition) + DistMult decoder for link prediction on a random knowledge graph.

Message passing is written by hand over an edge list: one matmul per relation type, messages summed into the
target nodes with index_add_ and normalised by in-degree. Sizes come from environment variables.
"""
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

NUM_NODES = int(os.environ.get("NUM_NODES", 100_000))
NUM_RELS = int(os.environ.get("NUM_RELS", 50))
NUM_EDGES = int(os.environ.get("NUM_EDGES", 2_000_000))
HIDDEN = int(os.environ.get("HIDDEN", 200))
NUM_BASES = int(os.environ.get("NUM_BASES", 30))
NUM_LAYERS = int(os.environ.get("NUM_LAYERS", 2))
BATCH_TRIPLES = int(os.environ.get("BATCH_TRIPLES", 30_000))
NEG_PER_POS = int(os.environ.get("NEG_PER_POS", 10))
EPOCHS = int(os.environ.get("EPOCHS", 5))
LR = float(os.environ.get("LR", "1e-2"))


class RGCNLayer(nn.Module):
    def __init__(self, in_dim, out_dim, num_rels, num_bases, act=True):
        super().__init__()
        self.num_rels = num_rels
        self.bases = nn.Parameter(torch.empty(num_bases, in_dim, out_dim))
        self.coeff = nn.Parameter(torch.empty(num_rels, num_bases))
        self.self_loop = nn.Linear(in_dim, out_dim, bias=False)
        self.bias = nn.Parameter(torch.zeros(out_dim))
        nn.init.xavier_uniform_(self.bases)
        nn.init.xavier_uniform_(self.coeff)
        self.act = act

    def forward(self, h, src, dst, rel, norm):
        weight = torch.einsum("rb,bio->rio", self.coeff, self.bases)    # (R, in, out)
        out = self.self_loop(h)
        for r in range(self.num_rels):
            idx = (rel == r).nonzero(as_tuple=True)[0]
            if idx.numel() == 0:
                continue
            msg = h[src[idx]] @ weight[r] * norm[idx, None]
            out = out.index_add(0, dst[idx], msg)
        out = out + self.bias
        return F.relu(out) if self.act else out


class LinkPredictor(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(NUM_NODES, HIDDEN)
        self.layers = nn.ModuleList(
            [RGCNLayer(HIDDEN, HIDDEN, 2 * NUM_RELS, NUM_BASES, act=i < NUM_LAYERS - 1) for i in range(NUM_LAYERS)]
        )
        self.rel_diag = nn.Parameter(torch.randn(NUM_RELS, HIDDEN) * 0.1)   # DistMult
        self.drop = nn.Dropout(0.2)

    def encode(self, src, dst, rel, norm):
        h = self.emb.weight
        for layer in self.layers:
            h = self.drop(layer(h, src, dst, rel, norm))
        return h

    def score(self, h, triples):
        return (h[triples[:, 0]] * self.rel_diag[triples[:, 1]] * h[triples[:, 2]]).sum(-1)


def build_graph(device):
    src = torch.randint(0, NUM_NODES, (NUM_EDGES,), device=device)
    dst = torch.randint(0, NUM_NODES, (NUM_EDGES,), device=device)
    rel = torch.randint(0, NUM_RELS, (NUM_EDGES,), device=device)
    # add inverse edges with their own relation ids
    src, dst = torch.cat([src, dst]), torch.cat([dst, src])
    rel = torch.cat([rel, rel + NUM_RELS])
    deg = torch.zeros(NUM_NODES, device=device).index_add_(0, dst, torch.ones_like(dst, dtype=torch.float))
    norm = 1.0 / deg[dst].clamp(min=1)
    return src, dst, rel, norm


def main():
    device = torch.device("cuda")
    src, dst, rel, norm = build_graph(device)
    model = LinkPredictor().to(device)
    opt = torch.optim.Adam(model.parameters(), lr=LR)
    for epoch in range(EPOCHS):
        model.train()
        pick = torch.randint(0, NUM_EDGES, (BATCH_TRIPLES,), device=device)
        pos = torch.stack([src[pick], rel[pick], dst[pick]], 1)
        neg = pos.repeat(NEG_PER_POS, 1)
        corrupt = torch.rand(neg.size(0), device=device) < 0.5
        rand_nodes = torch.randint(0, NUM_NODES, (neg.size(0),), device=device)
        neg[:, 0] = torch.where(corrupt, rand_nodes, neg[:, 0])
        neg[:, 2] = torch.where(corrupt, neg[:, 2], rand_nodes)
        triples = torch.cat([pos, neg])
        labels = torch.cat([torch.ones(len(pos)), torch.zeros(len(neg))]).to(device)

        h = model.encode(src, dst, rel, norm)
        logits = model.score(h, triples)
        loss = F.binary_cross_entropy_with_logits(logits, labels) + 0.01 * h.pow(2).mean()
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        print(f"epoch {epoch}: loss {loss.item():.4f}")
    print(f"peak {torch.cuda.max_memory_allocated() / 1024**3:.2f} GiB")


if __name__ == "__main__":
    main()
