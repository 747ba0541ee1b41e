#!/usr/bin/env python
# MNIST with a small MLP. Written for the "intro to DL" homework 2.
import argparse
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision import datasets, transforms


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--gpu", type=str, default="0", help="which GPU to expose")
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--bs", type=int, default=128)
    p.add_argument("--lr", type=float, default=1e-3)
    return p.parse_args()


args = parse_args()
# value comes from the command line, not hard-coded
os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
print("visible:", os.environ.get("CUDA_VISIBLE_DEVICES"))

device = "cuda" if torch.cuda.is_available() else "cpu"


class MLP(nn.Module):
    def __init__(self, hidden=256):
        super().__init__()
        self.net = nn.Sequential(
            nn.Flatten(),
            nn.Linear(28 * 28, hidden),
            nn.ReLU(),
            nn.Linear(hidden, hidden),
            nn.ReLU(),
            nn.Linear(hidden, 10),
        )

    def forward(self, x):
        return self.net(x)


tf = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))])
train_ds = datasets.MNIST("data", train=True, download=True, transform=tf)
test_ds = datasets.MNIST("data", train=False, download=True, transform=tf)
train_dl = DataLoader(train_ds, batch_size=args.bs, shuffle=True, num_workers=2)
test_dl = DataLoader(test_ds, batch_size=512)

model = MLP().to(device)
opt = torch.optim.Adam(model.parameters(), lr=args.lr)

train_losses = []
detached_losses = []
test_accs = []

for epoch in range(args.epochs):
    t0 = time.time()
    model.train()
    for x, y in train_dl:
        x, y = x.to(device), y.to(device)
        logits = model(x)
        loss = F.cross_entropy(logits, y)
        model.zero_grad()
        loss.backward()
        opt.step()
        train_losses.append(loss.item())
        l = loss.detach()
        detached_losses.append(l)

    model.eval()
    correct = 0
    total = 0
    with torch.no_grad():
        for x, y in test_dl:
            x, y = x.to(device), y.to(device)
            pred = model(x).argmax(dim=1)
            correct += (pred == y).sum()
            total += y.numel()
    acc = correct.item() / total
    test_accs.append(acc)
    # once per epoch is fine
    torch.cuda.empty_cache()
    print(f"epoch {epoch}: loss={sum(train_losses[-len(train_dl):]) / len(train_dl):.4f} "
          f"acc={acc:.4f} ({time.time() - t0:.1f}s)")

torch.save({"model": model.state_dict(), "accs": test_accs}, "mlp_mnist.pt")
