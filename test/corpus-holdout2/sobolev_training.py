"""Sobolev training (Czarnecki et al. 2017): fit f(x) and its input derivative df/dx.

Data: (x, y, dy/dx) triples sampled from a known function, stored in an .npz file.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

EPOCHS = 200
BATCH_SIZE = 512
LR = 3e-4
DERIV_WEIGHT = 0.1
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


class Net(nn.Module):
    def __init__(self, d_in=8, width=256, depth=4):
        super().__init__()
        layers = []
        d = d_in
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.Softplus()]
            d = width
        layers.append(nn.Linear(d, 1))
        self.f = nn.Sequential(*layers)

    def forward(self, x):
        return self.f(x)


data = np.load("data/styblinski_tang_8d.npz")
x_all = torch.from_numpy(data["x"]).float()
y_all = torch.from_numpy(data["y"]).float().unsqueeze(1)
dy_all = torch.from_numpy(data["dy"]).float()
loader = DataLoader(TensorDataset(x_all, y_all, dy_all), batch_size=BATCH_SIZE, shuffle=True, drop_last=True)

net = Net(d_in=x_all.shape[1]).to(DEVICE)
optimizer = torch.optim.Adam(net.parameters(), lr=LR)

history = []
for epoch in range(EPOCHS):
    epoch_loss = 0.0
    for x, y, dy in loader:
        x = x.to(DEVICE).requires_grad_(True)
        y, dy = y.to(DEVICE), dy.to(DEVICE)

        y_pred = net(x)
        # input gradient of the prediction; parameters also receive .grad here
        torch.autograd.backward(y_pred.sum(), create_graph=True)  # expect: OOM116
        dy_pred = x.grad

        loss = F.mse_loss(y_pred, y) + DERIV_WEIGHT * F.mse_loss(dy_pred, dy)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        epoch_loss += loss.item()
    history.append(epoch_loss / len(loader))
    if epoch % 10 == 0:
        print(f"epoch {epoch:4d}  loss {history[-1]:.5f}")

torch.save(net.state_dict(), "sobolev_net.pt")
