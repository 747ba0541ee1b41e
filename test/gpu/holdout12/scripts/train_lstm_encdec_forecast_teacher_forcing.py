"""Multi-step traffic forecasting with an LSTM encoder-decoder (teacher forcing with a decaying ratio).

The decoder is an LSTMCell unrolled in Python over the horizon; at each step it is fed either the ground truth
(teacher forcing) or its own previous prediction. Config is an inline YAML string.
"""
import random

import torch
import torch.nn as nn
import yaml
from torch.utils.data import DataLoader, Dataset

CONFIG_YAML = """
data:
  n_sensors: 64
  lookback: 336
  horizon: 96
  batch_size: 256
model:
  hidden: 1024
  enc_layers: 2
  dropout: 0.1
train:
  lr: 0.001
  epochs: 2
  batches_per_epoch: 3
  tf_start: 1.0
  tf_decay: 0.7
"""
cfg = yaml.safe_load(CONFIG_YAML)


class TrafficWindows(Dataset):
    def __init__(self, n, lookback, horizon, n_sensors):
        self.n, self.lookback, self.horizon, self.n_sensors = n, lookback, horizon, n_sensors

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        t = torch.arange(self.lookback + self.horizon).float()[:, None]
        phase = torch.rand(1, self.n_sensors) * 6.28
        series = torch.sin(t / 24 * 6.28 + phase) + 0.1 * torch.randn(len(t), self.n_sensors)
        return series[:self.lookback], series[self.lookback:]


class Seq2SeqForecaster(nn.Module):
    def __init__(self, n_sensors, hidden, enc_layers, dropout):
        super().__init__()
        self.encoder = nn.LSTM(n_sensors, hidden, num_layers=enc_layers, batch_first=True, dropout=dropout)
        self.decoder = nn.LSTMCell(n_sensors, hidden)
        self.out = nn.Linear(hidden, n_sensors)
        self.enc_layers = enc_layers

    def forward(self, src, horizon, target=None, tf_ratio=0.0):
        _, (h, c) = self.encoder(src)
        h, c = h[-1], c[-1]
        inp = src[:, -1]
        preds = []
        for t in range(horizon):
            h, c = self.decoder(inp, (h, c))
            y = self.out(h)
            preds.append(y)
            if target is not None and random.random() < tf_ratio:
                inp = target[:, t]
            else:
                inp = y
        return torch.stack(preds, dim=1)


def main():
    d, m, tr = cfg["data"], cfg["model"], cfg["train"]
    device = torch.device("cuda")
    ds = TrafficWindows(d["batch_size"] * tr["batches_per_epoch"], d["lookback"], d["horizon"], d["n_sensors"])
    loader = DataLoader(ds, batch_size=d["batch_size"], shuffle=True, num_workers=4, drop_last=True)
    model = Seq2SeqForecaster(d["n_sensors"], m["hidden"], m["enc_layers"], m["dropout"]).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=tr["lr"])
    loss_fn = nn.SmoothL1Loss()
    tf = tr["tf_start"]
    for epoch in range(tr["epochs"]):
        model.train()
        for i, (x, y) in enumerate(loader):
            x, y = x.to(device), y.to(device)
            pred = model(x, d["horizon"], target=y, tf_ratio=tf)
            loss = loss_fn(pred, y)
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            print(f"epoch {epoch} batch {i} loss {loss.item():.4f} tf={tf:.2f}")
        tf *= tr["tf_decay"]
    print("peak GiB %.2f" % (torch.cuda.max_memory_allocated() / 2 ** 30))


if __name__ == "__main__":
    main()
