"""EGNN（E(n) 等变图神经网络）在一批小分子图上回归能量。

每个分子 29 个原子，分子内全连接（不含自环），一批图拼成一个大图，消息传递用 index_add_ 实现。
数据是随机生成的（原子类型、坐标、能量）。
"""
import math
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


def get_config():
    # 所有超参数都在这里
    return {
        "n_atoms": 29,
        "n_atom_types": 10,
        "hidden": 256,
        "n_layers": 7,
        "batch_graphs": 128,
        "lr": 5e-4,
        "steps": 6,
        "num_samples": 2048,
    }


class RandomMolecules(Dataset):
    def __init__(self, n, n_atoms, n_types):
        self.n, self.n_atoms, self.n_types = n, n_atoms, n_types

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        z = torch.randint(0, self.n_types, (self.n_atoms,))
        pos = torch.randn(self.n_atoms, 3) * 1.5
        y = torch.randn(())
        return z, pos, y


def full_edges(n_atoms, n_graphs, device):
    # 分子内全连接的边（i != j），再按图偏移
    idx = torch.arange(n_atoms, device=device)
    src, dst = torch.meshgrid(idx, idx, indexing="ij")
    mask = src != dst
    src, dst = src[mask], dst[mask]
    offsets = (torch.arange(n_graphs, device=device) * n_atoms).repeat_interleave(src.numel())
    return src.repeat(n_graphs) + offsets, dst.repeat(n_graphs) + offsets


class EGNNLayer(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.edge_mlp = nn.Sequential(
            nn.Linear(2 * hidden + 1, hidden), nn.SiLU(),
            nn.Linear(hidden, hidden), nn.SiLU(),
        )
        self.coord_mlp = nn.Sequential(nn.Linear(hidden, hidden), nn.SiLU(), nn.Linear(hidden, 1, bias=False))
        self.node_mlp = nn.Sequential(
            nn.Linear(2 * hidden, hidden), nn.SiLU(), nn.Linear(hidden, hidden),
        )
        self.norm = nn.LayerNorm(hidden)

    def forward(self, h, x, src, dst):
        diff = x[src] - x[dst]                      # (E, 3)
        dist2 = (diff ** 2).sum(-1, keepdim=True)   # (E, 1)
        m = self.edge_mlp(torch.cat([h[src], h[dst], dist2], dim=-1))  # (E, H)
        # 坐标更新（等变）
        w = self.coord_mlp(m)
        deg = torch.zeros(x.size(0), 1, device=x.device).index_add_(0, src, torch.ones_like(w))
        dx = torch.zeros_like(x).index_add_(0, src, diff * w) / deg.clamp(min=1)
        x = x + dx
        # 节点更新：聚合消息
        agg = torch.zeros_like(h).index_add_(0, src, m)
        h = self.norm(h + self.node_mlp(torch.cat([h, agg], dim=-1)))
        return h, x


class EGNN(nn.Module):
    def __init__(self, n_types, hidden, n_layers):
        super().__init__()
        self.embed = nn.Embedding(n_types, hidden)
        self.layers = nn.ModuleList([EGNNLayer(hidden) for _ in range(n_layers)])
        self.readout = nn.Sequential(nn.Linear(hidden, hidden), nn.SiLU(), nn.Linear(hidden, 1))

    def forward(self, z, pos, src, dst, graph_index, n_graphs):
        h = self.embed(z)
        x = pos
        for layer in self.layers:
            h, x = layer(h, x, src, dst)
        # 图级池化：按图求和
        pooled = torch.zeros(n_graphs, h.size(1), device=h.device, dtype=h.dtype).index_add_(0, graph_index, h)
        return self.readout(pooled).squeeze(-1)


def main():
    cfg = get_config()
    device = torch.device("cuda")
    ds = RandomMolecules(cfg["num_samples"], cfg["n_atoms"], cfg["n_atom_types"])
    loader = DataLoader(ds, batch_size=cfg["batch_graphs"], shuffle=True, drop_last=True)

    model = EGNN(cfg["n_atom_types"], cfg["hidden"], cfg["n_layers"]).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    print("参数量:", sum(p.numel() for p in model.parameters()))

    src, dst = full_edges(cfg["n_atoms"], cfg["batch_graphs"], device)
    graph_index = torch.arange(cfg["batch_graphs"], device=device).repeat_interleave(cfg["n_atoms"])
    print("边数:", src.numel())

    step = 0
    t0 = time.time()
    while step < cfg["steps"]:
        for z, pos, y in loader:
            z = z.to(device).flatten()
            pos = pos.to(device).reshape(-1, 3)
            y = y.to(device)
            pred = model(z, pos, src, dst, graph_index, cfg["batch_graphs"])
            loss = nn.functional.l1_loss(pred, y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 10.0)
            opt.step()
            step += 1
            print(f"step {step} loss {loss.item():.4f}")
            if step >= cfg["steps"]:
                break
    print("用时 %.1fs, 峰值显存 %.2f GiB" % (time.time() - t0, torch.cuda.max_memory_allocated() / 2 ** 30))


if __name__ == "__main__":
    main()
