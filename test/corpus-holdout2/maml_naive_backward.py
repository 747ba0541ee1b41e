# MAML for few-shot sine regression -- my own implementation for the meta-learning seminar.
# Inner step uses .backward(create_graph=True) so that p.grad stays differentiable.
import random

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call

ITERS = 20000
TASKS = 16
K = 10
INNER_LR = 0.01
META_LR = 1e-3
device = torch.device("cuda")


class SineNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(1, 40)
        self.l2 = nn.Linear(40, 40)
        self.out = nn.Linear(40, 1)

    def forward(self, x):
        return self.out(F.relu(self.l2(F.relu(self.l1(x)))))


def sample_task():
    a = random.uniform(0.1, 5.0)
    b = random.uniform(0.0, 3.1416)
    x = torch.rand(2 * K, 1, device=device) * 10 - 5
    y = a * torch.sin(x + b)
    return x[:K], y[:K], x[K:], y[K:]


model = SineNet().to(device)
meta_opt = torch.optim.Adam(model.parameters(), lr=META_LR)

for it in range(ITERS):
    meta_opt.zero_grad()
    meta_grads = [torch.zeros_like(p) for p in model.parameters()]
    total_q = 0.0
    for task in range(TASKS):
        xs, ys, xq, yq = sample_task()
        model.zero_grad()
        support_loss = F.mse_loss(model(xs), ys)
        support_loss.backward(create_graph=True)  # expect: OOM116
        fast = {n: p - INNER_LR * p.grad for n, p in model.named_parameters()}
        query_loss = F.mse_loss(functional_call(model, fast, (xq,)), yq)
        grads = torch.autograd.grad(query_loss, list(model.parameters()))
        for acc, g in zip(meta_grads, grads):
            acc.add_(g, alpha=1.0 / TASKS)
        total_q += query_loss.item()
    for p, g in zip(model.parameters(), meta_grads):
        p.grad = g
    meta_opt.step()
    if it % 500 == 0:
        print(f"it {it}  mean query loss {total_q / TASKS:.4f}")
