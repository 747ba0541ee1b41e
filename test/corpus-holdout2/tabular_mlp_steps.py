#!/usr/bin/env python
# quick tabular regression baseline (house prices), trains for a fixed number of steps
import os

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

MAX_STEPS = int(os.environ.get("MAX_STEPS", "20000"))
BS = int(os.environ.get("BS", "256"))
HIDDEN = 512

df = pd.read_csv("data/house_prices.csv")
y_np = np.log1p(df.pop("SalePrice").values.astype(np.float32))
X_np = pd.get_dummies(df.fillna(0)).values.astype(np.float32)
X_np = (X_np - X_np.mean(0)) / (X_np.std(0) + 1e-6)
train_loader = DataLoader(TensorDataset(torch.from_numpy(X_np), torch.from_numpy(y_np)), batch_size=BS, shuffle=True)

model = nn.Sequential(
    nn.Linear(X_np.shape[1], HIDDEN), nn.BatchNorm1d(HIDDEN), nn.ReLU(), nn.Dropout(0.2),
    nn.Linear(HIDDEN, HIDDEN // 2), nn.BatchNorm1d(HIDDEN // 2), nn.ReLU(),
    nn.Linear(HIDDEN // 2, 1),
).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-4)
scaler = torch.cuda.amp.GradScaler()
loss_fn = nn.SmoothL1Loss()

step = 0
tr_loss = 0.0
data_iter = iter(train_loader)
while step < MAX_STEPS:
    try:
        batch = next(data_iter)
    except StopIteration:
        data_iter = iter(train_loader)
        batch = next(data_iter)
    x, y = batch[0].cuda(), batch[1].cuda()
    with torch.autocast("cuda", dtype=torch.float16):
        pred = model(x).squeeze(-1)
        loss = loss_fn(pred, y)
    scaler.scale(loss).backward(retain_graph=True)  # expect: OOM107
    scaler.step(opt)  # expect: OOM103
    scaler.update()
    tr_loss += loss  # expect: OOM102
    step += 1
    if step % 500 == 0:
        print(f"step {step}  avg loss {tr_loss.item() / step:.5f}")

torch.save(model.state_dict(), "mlp_house.pt")
