# Tabular regression with a very deep residual-free MLP; activations recomputed with checkpoint_sequential.
import time

import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint_sequential
from torch.utils.data import DataLoader, TensorDataset

config = {
    "n_features": 512,
    "width": 4096,
    "depth": 24,
    "segments": 4,
    "batch_size": 8192,
    "lr": 1e-3,
    "iters": 5,
}


def make_mlp(n_features, width, depth):
    layers = [nn.Linear(n_features, width), nn.GELU()]
    for i in range(depth - 1):
        layers += [nn.Linear(width, width), nn.LayerNorm(width), nn.GELU()]
        if i % 8 == 7:
            layers.append(nn.Dropout(0.1))
    layers.append(nn.Linear(width, 1))
    return nn.Sequential(*layers)


net = make_mlp(config["n_features"], config["width"], config["depth"]).cuda()
print("params:", sum(p.numel() for p in net.parameters()))
opt = torch.optim.NAdam(net.parameters(), lr=config["lr"])

n = config["batch_size"] * config["iters"]
X = torch.randn(n, config["n_features"])
y = X[:, :8].sum(1, keepdim=True) + 0.1 * torch.randn(n, 1)
loader = DataLoader(TensorDataset(X, y), batch_size=config["batch_size"], shuffle=True)

net.train()
t0 = time.time()
for i, (xb, yb) in enumerate(loader):
    xb = xb.cuda(non_blocking=True).requires_grad_()
    yb = yb.cuda(non_blocking=True)
    out = checkpoint_sequential(net, config["segments"], xb, use_reentrant=False)
    loss = nn.functional.mse_loss(out, yb)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(i, loss.item(), f"{time.time() - t0:.1f}s")
print("peak alloc GiB", torch.cuda.max_memory_allocated() / 2**30)
