"""Estimate the top Hessian eigenvalue of a trained MLP on one batch by power iteration.

Single double-backward (create_graph=True) outside any loop, then Hessian-vector products
with torch.autograd.grad.
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torchvision import datasets, transforms

ap = argparse.ArgumentParser()
ap.add_argument("--ckpt", default="mlp_mnist.pt")
ap.add_argument("--batch_size", type=int, default=2048)
ap.add_argument("--power_iters", type=int, default=50)
args = ap.parse_args()

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

model = nn.Sequential(nn.Flatten(), nn.Linear(784, 512), nn.Tanh(), nn.Linear(512, 512), nn.Tanh(), nn.Linear(512, 10))
model.load_state_dict(torch.load(args.ckpt, map_location=device))
model.to(device)

ds = datasets.MNIST("data", train=True, download=True, transform=transforms.ToTensor())
loader = torch.utils.data.DataLoader(ds, batch_size=args.batch_size, shuffle=True)
x, y = next(iter(loader))
x, y = x.to(device), y.to(device)

params = [p for p in model.parameters() if p.requires_grad]
loss = F.cross_entropy(model(x), y)
loss.backward(create_graph=True)
grads = [p.grad for p in params]

v = [torch.randn_like(p) for p in params]
eigs = []
eig = None
for i in range(args.power_iters):
    norm = torch.sqrt(sum((vi * vi).sum() for vi in v))
    v = [vi / norm for vi in v]
    Hv = torch.autograd.grad(grads, params, grad_outputs=v, retain_graph=True)
    new_eig = sum((hvi * vi).sum() for hvi, vi in zip(Hv, v)).item()
    eigs.append(new_eig)
    v = [h.detach() for h in Hv]
    if eig is not None and abs(new_eig - eig) / (abs(eig) + 1e-6) < 1e-4:
        break
    eig = new_eig

print(f"top eigenvalue after {len(eigs)} iterations: {eigs[-1]:.4f}")
