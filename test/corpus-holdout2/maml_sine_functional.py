"""MAML on sinusoid regression (Finn et al. 2017) with torch.func.functional_call.

Second-order: inner-loop gradients are taken with create_graph=True through torch.autograd.grad.
"""
import argparse
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call


class MLP(nn.Module):
    def __init__(self, hidden=40):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(1, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, x):
        return self.net(x)


def sample_sine_task(k_shot, device):
    amp = np.random.uniform(0.1, 5.0)
    phase = np.random.uniform(0, math.pi)
    xs = torch.empty(2 * k_shot, 1).uniform_(-5.0, 5.0)
    ys = amp * torch.sin(xs + phase)
    xs, ys = xs.to(device), ys.to(device)
    return xs[:k_shot], ys[:k_shot], xs[k_shot:], ys[k_shot:]


def adapt(model, xs, ys, inner_lr, steps, create_graph):
    params = dict(model.named_parameters())
    for _ in range(steps):
        support_loss = F.mse_loss(functional_call(model, params, (xs,)), ys)
        grads = torch.autograd.grad(support_loss, list(params.values()), create_graph=create_graph)
        params = {name: p - inner_lr * g for (name, p), g in zip(params.items(), grads)}
    return params


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--meta_iters", type=int, default=70000)
    ap.add_argument("--meta_batch", type=int, default=25)
    ap.add_argument("--k_shot", type=int, default=10)
    ap.add_argument("--inner_steps", type=int, default=1)
    ap.add_argument("--inner_lr", type=float, default=0.01)
    ap.add_argument("--meta_lr", type=float, default=1e-3)
    args = ap.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = MLP().to(device)
    meta_opt = torch.optim.Adam(model.parameters(), lr=args.meta_lr)

    for it in range(args.meta_iters):
        meta_opt.zero_grad()
        query_losses = []
        for t in range(args.meta_batch):
            xs, ys, xq, yq = sample_sine_task(args.k_shot, device)
            params = dict(model.named_parameters())
            for _ in range(args.inner_steps):
                support_loss = F.mse_loss(functional_call(model, params, (xs,)), ys)
                grads = torch.autograd.grad(support_loss, list(params.values()), create_graph=True)
                params = {name: p - args.inner_lr * g for (name, p), g in zip(params.items(), grads)}
            query_loss = F.mse_loss(functional_call(model, params, (xq,)), yq)
            query_losses.append(query_loss)
        meta_loss = torch.stack(query_losses).mean()
        meta_loss.backward()
        meta_opt.step()

        if it % 1000 == 0:
            xs, ys, xq, yq = sample_sine_task(args.k_shot, device)
            fast = adapt(model, xs, ys, args.inner_lr, steps=10, create_graph=False)
            with torch.no_grad():
                post = F.mse_loss(functional_call(model, fast, (xq,)), yq).item()
            print(f"iter {it}: meta-loss {meta_loss.item():.4f}  post-adaptation MSE {post:.4f}")

    torch.save(model.state_dict(), "maml_sine.pt")


if __name__ == "__main__":
    main()
