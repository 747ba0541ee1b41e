"""TabNet (Arik & Pfister) written from the paper: ghost batch norm, GLU feature transformers, sparsemax
attentive masks over 5 decision steps. Defaults below, overridden by configs/tabnet_credit.json (cwd-relative).
"""
import json
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

BASE = dict(n_features=128, n_classes=2, n_d=8, n_a=8, n_steps=3, gamma=1.3, n_shared=2, n_independent=2,
            virtual_batch_size=128, batch_size=1024, lambda_sparse=1e-3, lr=2e-2, epochs=1, steps_per_epoch=6)
with open("configs/tabnet_credit.json") as fh:
    cfg = {**BASE, **json.load(fh)}


def sparsemax(z, dim=-1):
    z_sorted, _ = torch.sort(z, dim=dim, descending=True)
    k = torch.arange(1, z.size(dim) + 1, device=z.device, dtype=z.dtype).view(1, -1)
    z_cumsum = z_sorted.cumsum(dim) - 1
    support = k * z_sorted > z_cumsum
    k_z = support.sum(dim=dim, keepdim=True)
    tau = z_cumsum.gather(dim, k_z - 1) / k_z.to(z.dtype)
    return torch.clamp(z - tau, min=0)


class GhostBatchNorm(nn.Module):
    def __init__(self, dim, virtual_batch_size, momentum=0.02):
        super().__init__()
        self.vbs = virtual_batch_size
        self.bn = nn.BatchNorm1d(dim, momentum=momentum)

    def forward(self, x):
        chunks = x.chunk(math.ceil(x.shape[0] / self.vbs), dim=0)
        return torch.cat([self.bn(c) for c in chunks], dim=0)


class GLULayer(nn.Module):
    def __init__(self, fc, out_dim, vbs):
        super().__init__()
        self.fc = fc
        self.bn = GhostBatchNorm(2 * out_dim, vbs)

    def forward(self, x):
        return F.glu(self.bn(self.fc(x)), dim=-1)


class FeatureTransformer(nn.Module):
    def __init__(self, in_dim, out_dim, shared_fcs, n_independent, vbs):
        super().__init__()
        layers = [GLULayer(fc, out_dim, vbs) for fc in shared_fcs]
        d = out_dim if shared_fcs else in_dim
        for _ in range(n_independent):
            layers.append(GLULayer(nn.Linear(d, 2 * out_dim, bias=False), out_dim, vbs))
            d = out_dim
        self.layers = nn.ModuleList(layers)

    def forward(self, x):
        x = self.layers[0](x)
        for layer in self.layers[1:]:
            x = (x + layer(x)) * math.sqrt(0.5)
        return x


class AttentiveTransformer(nn.Module):
    def __init__(self, n_a, n_features, vbs):
        super().__init__()
        self.fc = nn.Linear(n_a, n_features, bias=False)
        self.bn = GhostBatchNorm(n_features, vbs)

    def forward(self, a, prior):
        return sparsemax(self.bn(self.fc(a)) * prior)


class TabNet(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        nd_na = c["n_d"] + c["n_a"]
        vbs = c["virtual_batch_size"]
        self.initial_bn = nn.BatchNorm1d(c["n_features"], momentum=0.01)
        shared = nn.ModuleList([nn.Linear(c["n_features"] if i == 0 else nd_na, 2 * nd_na, bias=False)
                                for i in range(c["n_shared"])])
        self.shared = shared
        self.initial_splitter = FeatureTransformer(c["n_features"], nd_na, shared, c["n_independent"], vbs)
        self.steps = nn.ModuleList()
        self.attn = nn.ModuleList()
        for _ in range(c["n_steps"]):
            self.steps.append(FeatureTransformer(c["n_features"], nd_na, shared, c["n_independent"], vbs))
            self.attn.append(AttentiveTransformer(c["n_a"], c["n_features"], vbs))
        self.head = nn.Linear(c["n_d"], c["n_classes"])

    def forward(self, x):
        x = self.initial_bn(x)
        prior = torch.ones_like(x)
        a = self.initial_splitter(x)[:, self.c["n_d"]:]
        out, m_loss = 0.0, 0.0
        for step, attn in zip(self.steps, self.attn):
            M = attn(a, prior)
            m_loss = m_loss + torch.mean(torch.sum(-M * torch.log(M + 1e-15), dim=1))
            prior = prior * (self.c["gamma"] - M)
            h = step(M * x)
            d, a = F.relu(h[:, : self.c["n_d"]]), h[:, self.c["n_d"]:]
            out = out + d
        return self.head(out), m_loss / self.c["n_steps"]


def main():
    n = cfg["batch_size"] * cfg["steps_per_epoch"]
    X = torch.randn(n, cfg["n_features"])
    y = torch.randint(0, cfg["n_classes"], (n,))
    loader = DataLoader(TensorDataset(X, y), batch_size=cfg["batch_size"], shuffle=True, drop_last=True)
    model = TabNet(cfg).cuda()
    print(f"TabNet params: {sum(p.numel() for p in model.parameters()):,}")
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=10, gamma=0.9)
    for epoch in range(cfg["epochs"]):
        model.train()
        for i, (xb, yb) in enumerate(loader):
            xb, yb = xb.cuda(non_blocking=True), yb.cuda(non_blocking=True)
            logits, m_loss = model(xb)
            loss = F.cross_entropy(logits, yb) + cfg["lambda_sparse"] * m_loss
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 2.0)
            opt.step()
            print(f"epoch {epoch} batch {i} loss {loss.item():.4f}")
        sched.step()
    print("peak GiB", round(torch.cuda.max_memory_allocated() / 2**30, 3))


if __name__ == "__main__":
    main()
