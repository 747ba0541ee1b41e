"""Full-batch GraphSAGE (mean aggregator) on a large synthetic graph, with the adjacency as a
torch.sparse COO matrix (row-normalised) and torch.sparse.mm for the neighbour mean.

200k nodes, ~4M edges, 602 input features, 3 layers of 512, 41 classes (Reddit-sized), transductive split.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

NUM_NODES = 200_000
AVG_DEGREE = 20
IN_FEATS = 602
HIDDEN = 512
NUM_LAYERS = 3
NUM_CLASSES = 41
DROPOUT = 0.5
EPOCHS = 5


def random_graph(n, avg_deg, device):
    e = n * avg_deg
    src = torch.randint(0, n, (e,), device=device)
    dst = torch.randint(0, n, (e,), device=device)
    idx = torch.stack([torch.cat([src, dst]), torch.cat([dst, src])])   # undirected
    val = torch.ones(idx.shape[1], device=device)
    adj = torch.sparse_coo_tensor(idx, val, (n, n)).coalesce()
    deg = torch.sparse.sum(adj, dim=1).to_dense().clamp(min=1)
    i = adj.indices()
    norm_val = adj.values() / deg[i[0]]
    return torch.sparse_coo_tensor(i, norm_val, (n, n)).coalesce()


class SAGELayer(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.lin_self = nn.Linear(d_in, d_out)
        self.lin_neigh = nn.Linear(d_in, d_out, bias=False)

    def forward(self, x, adj):
        neigh = torch.sparse.mm(adj, x)
        return self.lin_self(x) + self.lin_neigh(neigh)


class GraphSAGE(nn.Module):
    def __init__(self):
        super().__init__()
        dims = [IN_FEATS] + [HIDDEN] * (NUM_LAYERS - 1) + [NUM_CLASSES]
        self.layers = nn.ModuleList(SAGELayer(a, b) for a, b in zip(dims[:-1], dims[1:]))
        self.norms = nn.ModuleList(nn.BatchNorm1d(d) for d in dims[1:-1])

    def forward(self, x, adj):
        for i, layer in enumerate(self.layers):
            x = layer(x, adj)
            if i < len(self.layers) - 1:
                x = F.dropout(F.relu(self.norms[i](x)), p=DROPOUT, training=self.training)
        return x


device = torch.device("cuda")
adj = random_graph(NUM_NODES, AVG_DEGREE, device)
feats = torch.randn(NUM_NODES, IN_FEATS, device=device)
labels = torch.randint(0, NUM_CLASSES, (NUM_NODES,), device=device)
train_mask = torch.rand(NUM_NODES, device=device) < 0.66

model = GraphSAGE().to(device)
opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
for epoch in range(EPOCHS):
    model.train()
    out = model(feats, adj)
    loss = F.cross_entropy(out[train_mask], labels[train_mask])
    opt.zero_grad()
    loss.backward()
    opt.step()
    model.eval()
    with torch.no_grad():
        acc = (model(feats, adj).argmax(1) == labels)[~train_mask].float().mean()
    print(f"epoch {epoch} loss {loss.item():.4f} val acc {acc.item():.4f}")
