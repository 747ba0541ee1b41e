"""Multivariate load forecasting with a stacked LSTM (336-step lookback -> 96-step horizon).

All knobs come from environment variables so the same file runs in the notebook and in the job queue.
"""
import os
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

N_FEATURES = int(os.environ.get("N_FEATURES", 64))
LOOKBACK = int(os.environ.get("LOOKBACK", 336))
HORIZON = int(os.environ.get("HORIZON", 96))
HIDDEN = int(os.environ.get("HIDDEN", 1024))
LAYERS = int(os.environ.get("LAYERS", 3))
BATCH = int(os.environ.get("BATCH", 256))
STEPS = int(os.environ.get("STEPS", 8))
LR = float(os.environ.get("LR", 1e-3))
DEVICE = os.environ.get("DEVICE", "cuda")


class LSTMForecaster(nn.Module):
    def __init__(self, n_features, hidden, layers, horizon, dropout=0.1):
        super().__init__()
        self.inp = nn.Linear(n_features, hidden)
        self.lstm = nn.LSTM(hidden, hidden, num_layers=layers, batch_first=True, dropout=dropout)
        self.head = nn.Sequential(nn.LayerNorm(hidden), nn.Linear(hidden, horizon * n_features))
        self.horizon, self.n_features = horizon, n_features

    def forward(self, x):
        h, _ = self.lstm(self.inp(x))
        out = self.head(h[:, -1])
        return out.view(-1, self.horizon, self.n_features)


def make_windows(n_windows):
    series = torch.randn(n_windows + LOOKBACK + HORIZON, N_FEATURES).cumsum(0) * 0.01
    idx = torch.arange(n_windows)
    x = torch.stack([series[i:i + LOOKBACK] for i in idx])
    y = torch.stack([series[i + LOOKBACK:i + LOOKBACK + HORIZON] for i in idx])
    return TensorDataset(x, y)


@torch.no_grad()
def validate(model, loader):
    model.eval()
    total, n = 0.0, 0
    for x, y in loader:
        x, y = x.to(DEVICE), y.to(DEVICE)
        total += nn.functional.l1_loss(model(x), y, reduction="sum").item()
        n += y.numel()
    model.train()
    return total / n


def main():
    train_ds = make_windows(BATCH * STEPS)
    val_ds = make_windows(BATCH * 2)
    train_loader = DataLoader(train_ds, batch_size=BATCH, shuffle=True, drop_last=True)
    val_loader = DataLoader(val_ds, batch_size=BATCH * 2)

    model = LSTMForecaster(N_FEATURES, HIDDEN, LAYERS, HORIZON).to(DEVICE)
    opt = torch.optim.RMSprop(model.parameters(), lr=LR, alpha=0.99, momentum=0.0)
    loss_fn = nn.MSELoss()
    t0 = time.time()
    for step, (x, y) in enumerate(train_loader):
        x, y = x.to(DEVICE), y.to(DEVICE)
        pred = model(x)
        loss = loss_fn(pred, y)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5)
        opt.step()
        print(f"step {step} mse {loss.item():.5f}")
    print(f"val MAE {validate(model, val_loader):.4f}  ({time.time() - t0:.1f}s)")
    print("max allocated GiB", torch.cuda.max_memory_allocated() / 2 ** 30)


if __name__ == "__main__":
    main()
