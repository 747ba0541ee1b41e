# Multivariate load forecasting (ECL-like, 321 series): BiGRU encoder, GRU decoder.
# lookback 336 h -> horizon 96 h
import time

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

N_FEATURES = 321
LOOKBACK = 336
HORIZON = 96
HIDDEN = 512
ENC_LAYERS = 2
BATCH_SIZE = 256
EPOCHS = 1
LR = 0.01
MOMENTUM = 0.9
CLIP = 1.0


class WindowDataset(Dataset):
    """Sliding windows over a (T, N) matrix."""

    def __init__(self, series, lookback, horizon, stride=24):
        self.series = torch.from_numpy(series)
        self.lookback, self.horizon = lookback, horizon
        self.starts = list(range(0, len(series) - lookback - horizon, stride))

    def __len__(self):
        return len(self.starts)

    def __getitem__(self, i):
        s = self.starts[i]
        x = self.series[s:s + self.lookback]
        y = self.series[s + self.lookback:s + self.lookback + self.horizon]
        return x, y


class Seq2SeqForecaster(nn.Module):
    def __init__(self, n_features, hidden, num_layers, horizon, dropout=0.1):
        super().__init__()
        self.horizon = horizon
        self.encoder = nn.GRU(n_features, hidden, num_layers=num_layers, batch_first=True,
                              bidirectional=True, dropout=dropout)
        self.bridge = nn.Linear(2 * hidden, hidden)
        self.decoder = nn.GRU(n_features, hidden, num_layers=1, batch_first=True)
        self.head = nn.Linear(hidden, n_features)

    def forward(self, x):
        _, h = self.encoder(x)                      # h: (layers*2, B, H)
        h_last = torch.cat([h[-2], h[-1]], dim=-1)  # top layer, both directions
        h0 = torch.tanh(self.bridge(h_last)).unsqueeze(0)
        # decoder input: last observed value repeated over the horizon
        dec_in = x[:, -1:, :].expand(-1, self.horizon, -1).contiguous()
        out, _ = self.decoder(dec_in, h0)
        return self.head(out)


def train_one_epoch(model, loader, optimizer, criterion, device, epoch):
    model.train()
    total = 0.0
    for step, (x, y) in enumerate(loader):
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        pred = model(x)
        loss = criterion(pred, y)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), CLIP)
        optimizer.step()
        total += loss.item()
        print(f"epoch {epoch} step {step} mse {loss.item():.4f}")
    return total / (step + 1)


def main():
    device = torch.device("cuda")
    # ~5 batches worth of windows
    n_windows = BATCH_SIZE * 5
    T = LOOKBACK + HORIZON + 24 * n_windows + 1
    series = np.random.randn(T, N_FEATURES).astype(np.float32)
    ds = WindowDataset(series, LOOKBACK, HORIZON)
    loader = DataLoader(ds, batch_size=BATCH_SIZE, shuffle=True, drop_last=True)

    model = Seq2SeqForecaster(N_FEATURES, HIDDEN, ENC_LAYERS, HORIZON).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    criterion = nn.MSELoss()
    for epoch in range(EPOCHS):
        t = time.time()
        avg = train_one_epoch(model, loader, optimizer, criterion, device, epoch)
        print(f"epoch {epoch}: train mse {avg:.4f} ({time.time() - t:.1f}s)")


if __name__ == "__main__":
    main()
