"""24h-ahead electricity load forecasting with an LSTM encoder and an MLP head.

电力负荷预测：用过去一周（168 小时）的数据预测未来 24 小时。
"""
import argparse

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

LOOKBACK = 168   # 回看窗口：一周的小时数据
HORIZON = 24


class WindowDataset(Dataset):
    def __init__(self, series, lookback=LOOKBACK, horizon=HORIZON):
        self.x = torch.tensor(series, dtype=torch.float32)
        self.lookback, self.horizon = lookback, horizon

    def __len__(self):
        return len(self.x) - self.lookback - self.horizon

    def __getitem__(self, i):
        past = self.x[i:i + self.lookback]
        future = self.x[i + self.lookback:i + self.lookback + self.horizon, 0]
        return past, future


class Forecaster(nn.Module):
    def __init__(self, n_features, hidden=128):
        super().__init__()
        self.lstm = nn.LSTM(n_features, hidden, num_layers=2, batch_first=True, dropout=0.1)
        self.head = nn.Sequential(nn.Linear(hidden, 256), nn.ReLU(), nn.Linear(256, HORIZON))

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.head(out[:, -1])


# 清空梯度的小工具函数（注意：只在训练开始前调用了一次）
def reset_gradients(optimizer):
    optimizer.zero_grad(set_to_none=True)


def fit(model, loader, optimizer, scheduler, device, epochs):
    loss_fn = nn.HuberLoss(delta=1.0)
    reset_gradients(optimizer)
    for epoch in range(epochs):
        model.train()
        running = 0.0
        for past, future in loader:
            past, future = past.to(device), future.to(device)
            pred = model(past)
            loss = loss_fn(pred, future)
            loss.backward()
            optimizer.step()  # expect: OOM103
            running += loss.item()
        scheduler.step()
        print(f"epoch {epoch}: huber {running / len(loader):.4f}")


def predict(model, loader, device):
    model.eval()
    preds, trues = [], []
    for past, future in loader:
        yhat = model(past.to(device))  # expect: OOM104
        preds.append(yhat.detach().cpu().numpy())
        trues.append(future.numpy())
    return np.concatenate(preds), np.concatenate(trues)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", default="data/load_hourly.csv")
    ap.add_argument("--epochs", type=int, default=30)
    args = ap.parse_args()

    df = pd.read_csv(args.csv, parse_dates=["ts"]).set_index("ts")
    df["hour"] = df.index.hour / 23.0
    df["dow"] = df.index.dayofweek / 6.0
    values = df[["load", "temp", "hour", "dow"]].values.astype(np.float32)
    mu, sd = values[:, 0].mean(), values[:, 0].std()
    values[:, 0] = (values[:, 0] - mu) / sd

    split = int(0.8 * len(values))
    train_dl = DataLoader(WindowDataset(values[:split]), batch_size=256, shuffle=True)
    test_dl = DataLoader(WindowDataset(values[split:]), batch_size=512)

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = Forecaster(values.shape[1]).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)

    fit(model, train_dl, optimizer, scheduler, device, args.epochs)
    p, t = predict(model, test_dl, device)
    mape = np.mean(np.abs((p * sd + mu) - (t * sd + mu)) / np.abs(t * sd + mu))
    print(f"test MAPE: {mape:.3%}")


if __name__ == "__main__":
    main()
