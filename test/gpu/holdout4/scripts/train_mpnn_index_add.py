# 图神经网络（消息传递 MPNN）做图级回归，手写 index_add_ / scatter_add_ 聚合，不依赖 PyG。
# 一个 batch 把多张图拼成一张大图（节点编号加偏移），batch 向量记录每个节点属于哪张图。
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class RandomGraphs(Dataset):
    """随机图：每张图节点数、边数固定，节点特征与边特征随机。"""

    def __init__(self, num_graphs, num_nodes, num_edges, node_dim, edge_dim):
        self.num_graphs = num_graphs
        self.num_nodes, self.num_edges = num_nodes, num_edges
        self.node_dim, self.edge_dim = node_dim, edge_dim

    def __len__(self):
        return self.num_graphs

    def __getitem__(self, i):
        x = torch.randn(self.num_nodes, self.node_dim)
        edge_index = torch.randint(0, self.num_nodes, (2, self.num_edges))
        edge_attr = torch.randn(self.num_edges, self.edge_dim)
        y = torch.randn(1)
        return x, edge_index, edge_attr, y


def collate_graphs(items):
    xs, eis, eas, ys, batch = [], [], [], [], []
    offset = 0
    for g, (x, ei, ea, y) in enumerate(items):
        xs.append(x)
        eis.append(ei + offset)          # 节点编号加偏移
        eas.append(ea)
        ys.append(y)
        batch.append(torch.full((x.size(0),), g, dtype=torch.long))
        offset += x.size(0)
    return torch.cat(xs), torch.cat(eis, dim=1), torch.cat(eas), torch.cat(ys), torch.cat(batch)


class MPNNLayer(nn.Module):
    def __init__(self, hidden, edge_dim):
        super().__init__()
        self.msg = nn.Sequential(nn.Linear(2 * hidden + edge_dim, hidden), nn.SiLU(), nn.Linear(hidden, hidden))
        self.upd = nn.Sequential(nn.Linear(2 * hidden, hidden), nn.SiLU(), nn.Linear(hidden, hidden))
        self.norm = nn.LayerNorm(hidden)

    def forward(self, h, edge_index, edge_attr):
        src, dst = edge_index
        m = self.msg(torch.cat([h[dst], h[src], edge_attr], dim=-1))     # 每条边一条消息: [E, hidden]
        agg = torch.zeros_like(h).index_add_(0, dst, m)                   # 按目标节点求和
        deg = torch.zeros(h.size(0), device=h.device).index_add_(0, dst, torch.ones_like(dst, dtype=h.dtype))
        agg = agg / deg.clamp(min=1).unsqueeze(-1)
        return self.norm(h + self.upd(torch.cat([h, agg], dim=-1)))       # 残差 + LayerNorm


class MPNN(nn.Module):
    def __init__(self, node_dim, edge_dim, hidden, num_layers):
        super().__init__()
        self.embed = nn.Linear(node_dim, hidden)
        self.layers = nn.ModuleList([MPNNLayer(hidden, edge_dim) for _ in range(num_layers)])
        self.head = nn.Sequential(nn.Linear(hidden, hidden), nn.SiLU(), nn.Linear(hidden, 1))

    def forward(self, x, edge_index, edge_attr, batch, num_graphs):
        h = self.embed(x)
        for layer in self.layers:
            h = layer(h, edge_index, edge_attr)
        # 图级读出：scatter_add_ 求每张图的节点和，再除以节点数
        idx = batch.unsqueeze(-1).expand_as(h)
        pooled = torch.zeros(num_graphs, h.size(1), device=h.device, dtype=h.dtype).scatter_add_(0, idx, h)
        counts = torch.bincount(batch, minlength=num_graphs).clamp(min=1).unsqueeze(-1)
        return self.head(pooled / counts).squeeze(-1)


def main(graphs_per_batch=64, nodes_per_graph=2048, edges_per_graph=16384, node_dim=64, edge_dim=16,
         hidden=128, num_layers=4, lr=1e-3, steps=4):
    device = "cuda"
    model = MPNN(node_dim, edge_dim, hidden, num_layers).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    ds = RandomGraphs(graphs_per_batch * steps, nodes_per_graph, edges_per_graph, node_dim, edge_dim)
    loader = DataLoader(ds, batch_size=graphs_per_batch, shuffle=True, collate_fn=collate_graphs, num_workers=2)
    model.train()
    for step, (x, edge_index, edge_attr, y, batch) in enumerate(loader):
        x, edge_index, edge_attr = x.to(device), edge_index.to(device), edge_attr.to(device)
        y, batch = y.to(device), batch.to(device)
        pred = model(x, edge_index, edge_attr, batch, graphs_per_batch)
        loss = nn.functional.mse_loss(pred, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"step {step}: 节点 {x.size(0)} 边 {edge_index.size(1)} loss {loss.item():.4f}")
    print("峰值显存 %.2f GiB" % (torch.cuda.max_memory_allocated() / 2**30))


if __name__ == "__main__":
    main()
