"""Hamiltonian neural network on a coupled-pendulum system.

The network predicts a scalar energy H(q, p); the vector field (dq/dt, dp/dt) = (dH/dp, -dH/dq) comes from
torch.autograd.grad(..., create_graph=True), and trajectories are integrated with a hand-written RK4 loop so the
loss on the whole rollout back-propagates through every evaluation (double backward).
"""
import time

import torch
import torch.nn as nn


class HNN(nn.Module):
    def __init__(self, dof, hidden, depth):
        super().__init__()
        layers = [nn.Linear(2 * dof, hidden), nn.Softplus()]
        for _ in range(depth - 1):
            layers += [nn.Linear(hidden, hidden), nn.Softplus()]
        layers.append(nn.Linear(hidden, 1))
        self.energy = nn.Sequential(*layers)
        self.dof = dof

    def vector_field(self, x):
        if not x.requires_grad:
            x = x.requires_grad_(True)
        H = self.energy(x).sum()
        dH = torch.autograd.grad(H, x, create_graph=True)[0]
        dHdq, dHdp = dH[:, :self.dof], dH[:, self.dof:]
        return torch.cat([dHdp, -dHdq], dim=1)


def rk4_step(f, x, dt):
    k1 = f(x)
    k2 = f(x + 0.5 * dt * k1)
    k3 = f(x + 0.5 * dt * k2)
    k4 = f(x + dt * k3)
    return x + dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)


def true_dynamics(x, dof, k=1.0, coupling=0.3):
    q, p = x[:, :dof], x[:, dof:]
    dq = p
    lap = torch.roll(q, 1, 1) + torch.roll(q, -1, 1) - 2 * q
    dp = -k * torch.sin(q) + coupling * lap
    return torch.cat([dq, dp], 1)


@torch.no_grad()
def make_batch(n, dof, steps, dt, device):
    x = torch.randn(n, 2 * dof, device=device)
    traj = [x]
    for _ in range(steps):
        x = rk4_step(lambda s: true_dynamics(s, dof), x, dt)
        traj.append(x)
    return torch.stack(traj, 1)  # (n, steps + 1, 2 dof)


def main(n_traj=2048, dof=8, width=256, depth=4, rollout=16, dt=0.05, iters=5, lr=1e-3):
    device = torch.device("cuda")
    model = HNN(dof, hidden=width * 2, depth=depth).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    t0 = time.time()
    for it in range(iters):
        target = make_batch(n_traj, dof, rollout, dt, device)
        x = target[:, 0].clone().requires_grad_(True)
        preds = []
        for s in range(rollout):
            x = rk4_step(model.vector_field, x, dt)
            preds.append(x)
        pred = torch.stack(preds, 1)
        loss = (pred - target[:, 1:]).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"iter {it}: rollout mse {loss.item():.5f}  ({time.time() - t0:.1f}s)")
    print("peak %.2f GiB" % (torch.cuda.max_memory_allocated() / 2 ** 30))


if __name__ == "__main__":
    main()
