"""Condition-dependent image filtering with a hypernetwork.

A context encoder summarises a reference image into z; a hypernetwork maps z to the kernels of the main
network's conv layers (different kernels for every sample), applied with the grouped-conv trick
(batch folded into channels, groups=B). Hyper-parameters come from one row of configs/hyper_sweep.csv
(SWEEP_ROW picks the row).
"""
import csv
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

ROW = int(os.environ.get("SWEEP_ROW", "2"))
with open(os.path.join(os.path.dirname(__file__), "configs", "hyper_sweep.csv"), newline="") as f:
    rows = list(csv.DictReader(f))
hp = {k: (float(v) if k == "lr" else int(v)) for k, v in rows[ROW].items()}
print("sweep row", hp)


class ContextEncoder(nn.Module):
    def __init__(self, z_dim):
        super().__init__()
        chans = [3, 32, 64, 128, 256]
        layers = []
        for cin, cout in zip(chans[:-1], chans[1:]):
            layers += [nn.Conv2d(cin, cout, 3, stride=2, padding=1), nn.BatchNorm2d(cout), nn.ReLU(inplace=True)]
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(chans[-1], z_dim)

    def forward(self, x):
        return self.fc(self.features(x).mean(dim=(2, 3)))


class HyperConv(nn.Module):
    """3x3 conv whose weight and bias are produced per sample from z."""

    def __init__(self, z_dim, cin, cout, k=3):
        super().__init__()
        self.cin, self.cout, self.k = cin, cout, k
        self.to_w = nn.Linear(z_dim, cout * cin * k * k)
        self.to_b = nn.Linear(z_dim, cout)
        nn.init.normal_(self.to_w.weight, std=(1.0 / (cin * k * k)) ** 0.5 / z_dim ** 0.5)

    def forward(self, x, z):
        B, C, H, W = x.shape
        w = self.to_w(z).view(B * self.cout, self.cin, self.k, self.k)
        b = self.to_b(z).view(B * self.cout)
        out = F.conv2d(x.reshape(1, B * C, H, W), w, b, padding=self.k // 2, groups=B)
        return out.view(B, self.cout, H, W)


class DynamicFilterNet(nn.Module):
    def __init__(self, channels, n_layers, z_dim):
        super().__init__()
        self.context = ContextEncoder(z_dim)
        self.stem = nn.Conv2d(3, channels, 3, padding=1)
        self.dyn = nn.ModuleList([HyperConv(z_dim, channels, channels) for _ in range(n_layers)])
        self.norms = nn.ModuleList([nn.GroupNorm(8, channels) for _ in range(n_layers)])
        self.out = nn.Conv2d(channels, 3, 3, padding=1)

    def forward(self, query, reference):
        z = self.context(reference)
        h = F.relu(self.stem(query))
        for conv, norm in zip(self.dyn, self.norms):
            h = h + F.relu(norm(conv(h, z)))
        return self.out(h)


model = DynamicFilterNet(hp["channels"], hp["n_dyn_layers"], hp["z_dim"]).cuda()
print(f"params {sum(p.numel() for p in model.parameters()) / 1e6:.1f}M")
opt = torch.optim.Adam(model.parameters(), lr=hp["lr"])

B, S = hp["batch_size"], hp["img_size"]
for step in range(hp["steps"]):
    reference = torch.randn(B, 3, S, S, device="cuda")
    query = torch.randn(B, 3, S, S, device="cuda")
    target = query * 0.5 + reference.mean(dim=(2, 3), keepdim=True)
    pred = model(query, reference)
    loss = F.l1_loss(pred, target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} L1 {loss.item():.4f}")

print("peak GiB", torch.cuda.max_memory_allocated() / 2**30)
