"""N-BEATS (generic architecture): a deep stack of fully connected blocks with backcast / forecast residuals.

Configuration: configs/nbeats_m4.json, found relative to this file.
"""
import json
import os
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

CONFIG_PATH = Path(__file__).resolve().parent / "configs" / "nbeats_m4.json"


class Block(nn.Module):
    def __init__(self, backcast_length, forecast_length, width, n_layers):
        super().__init__()
        layers = []
        d = backcast_length
        for _ in range(n_layers):
            layers += [nn.Linear(d, width), nn.ReLU()]
            d = width
        self.fc = nn.Sequential(*layers)
        self.theta = nn.Linear(width, backcast_length + forecast_length)
        self.backcast_length = backcast_length

    def forward(self, x):
        theta = self.theta(self.fc(x))
        return theta[:, :self.backcast_length], theta[:, self.backcast_length:]


class NBeats(nn.Module):
    def __init__(self, backcast_length, forecast_length, stacks, layers_per_block, layer_width, **_):
        super().__init__()
        self.blocks = nn.ModuleList(
            Block(backcast_length, forecast_length, layer_width, layers_per_block) for _ in range(stacks)
        )

    def forward(self, x):
        residual = x.flip(dims=(1,))
        forecast = 0
        for block in self.blocks:
            backcast, f = block(residual)
            residual = residual - backcast
            forecast = forecast + f
        return forecast


class SlidingWindows(Dataset):
    def __init__(self, data, back, fore, samples):
        self.data, self.back, self.fore, self.samples = data, back, fore, samples

    def __len__(self):
        return self.samples

    def __getitem__(self, i):
        s = np.random.randint(0, self.data.shape[0])
        t = np.random.randint(self.back, self.data.shape[1] - self.fore)
        x = self.data[s, t - self.back:t]
        y = self.data[s, t:t + self.fore]
        return torch.from_numpy(x), torch.from_numpy(y)


def smape_loss(pred, target):
    return (2 * (pred - target).abs() / (pred.abs() + target.abs() + 1e-8)).mean()


def main():
    cfg = json.loads(CONFIG_PATH.read_text())
    rng = np.random.default_rng(0)
    data = (np.cumsum(rng.normal(size=(cfg["n_series"], cfg["series_length"])), axis=1) + 100).astype(np.float32)
    ds = SlidingWindows(data, cfg["backcast_length"], cfg["forecast_length"], cfg["batch_size"] * cfg["steps"])
    loader = DataLoader(ds, batch_size=cfg["batch_size"], num_workers=4, drop_last=True)

    model = NBeats(**cfg).cuda()
    print(f"N-BEATS with {sum(p.numel() for p in model.parameters()) / 1e6:.1f}M parameters")
    opt = torch.optim.Adam(model.parameters(), lr=cfg["learning_rate"])
    for step, (x, y) in enumerate(loader):
        x, y = x.cuda(), y.cuda()
        loss = smape_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        print(f"{step:3d} smape={loss.item():.4f}")
    print("peak GiB:", torch.cuda.max_memory_allocated() / 2 ** 30)


if __name__ == "__main__":
    main()
