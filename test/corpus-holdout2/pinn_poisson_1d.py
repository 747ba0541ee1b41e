"""Physics-informed neural network for the 1-D Poisson problem  -u''(x) = pi^2 sin(pi x),  u(0)=u(1)=0."""
import math

import torch
import torch.nn as nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"
N_COLLOC = 2048
N_ITERS = 20000


class PINN(nn.Module):
    def __init__(self, width=64, depth=4):
        super().__init__()
        layers = [nn.Linear(1, width), nn.Tanh()]
        for _ in range(depth - 1):
            layers += [nn.Linear(width, width), nn.Tanh()]
        layers.append(nn.Linear(width, 1))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


net = PINN().to(device)
optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
x_bc = torch.tensor([[0.0], [1.0]], device=device)

for it in range(N_ITERS):
    x = torch.rand(N_COLLOC, 1, device=device, requires_grad=True)
    u = net(x)
    # du/dx through backward so that x.grad is differentiable
    u.backward(torch.ones_like(u), create_graph=True)  # expect: OOM116
    u_x = x.grad
    u_xx = torch.autograd.grad(u_x, x, grad_outputs=torch.ones_like(u_x), create_graph=True)[0]
    residual = -u_xx - math.pi ** 2 * torch.sin(math.pi * x)
    loss = residual.pow(2).mean() + net(x_bc).pow(2).mean()

    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if it % 1000 == 0:
        with torch.no_grad():
            xs = torch.linspace(0, 1, 201, device=device).unsqueeze(1)
            err = (net(xs) - torch.sin(math.pi * xs)).abs().max().item()
        print(f"iter {it:6d}  loss {loss.item():.3e}  max err {err:.3e}")
