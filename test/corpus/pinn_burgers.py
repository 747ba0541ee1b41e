"""Physics-informed neural network for the 1D viscous Burgers equation.

u_t + u u_x - (0.01/pi) u_xx = 0,  x in [-1, 1], t in [0, 1]
Adam for a warm start, then L-BFGS.
"""
import math

import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(1234)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
NU = 0.01 / math.pi


class MLP(nn.Module):
    def __init__(self, layers=(2, 20, 20, 20, 20, 20, 20, 20, 20, 1)):
        super().__init__()
        mods = []
        for i in range(len(layers) - 2):
            mods += [nn.Linear(layers[i], layers[i + 1]), nn.Tanh()]
        mods.append(nn.Linear(layers[-2], layers[-1]))
        self.net = nn.Sequential(*mods)

    def forward(self, x, t):
        return self.net(torch.cat([x, t], dim=1))


def residual(model, x, t):
    u = model(x, t)
    u_t, u_x = torch.autograd.grad(u, (t, x), torch.ones_like(u), create_graph=True, retain_graph=True)
    u_xx = torch.autograd.grad(u_x, x, torch.ones_like(u_x), create_graph=True)[0]
    return u_t + u * u_x - NU * u_xx


# collocation points and boundary/initial data
N_f, N_b = 10000, 200
x_f = (torch.rand(N_f, 1, device=device) * 2 - 1).requires_grad_(True)
t_f = torch.rand(N_f, 1, device=device).requires_grad_(True)
x0 = torch.rand(N_b, 1, device=device) * 2 - 1
t0 = torch.zeros(N_b, 1, device=device)
u0 = -torch.sin(math.pi * x0)
tb = torch.rand(N_b, 1, device=device)
xb = torch.where(torch.rand(N_b, 1, device=device) > 0.5, 1.0, -1.0)
ub = torch.zeros(N_b, 1, device=device)

model = MLP().to(device)
adam = torch.optim.Adam(model.parameters(), lr=1e-3)
mse = nn.MSELoss()
log = []

for it in range(5000):
    adam.zero_grad()
    f = residual(model, x_f, t_f)
    loss_f = (f ** 2).mean()
    loss_u = mse(model(x0, t0), u0) + mse(model(xb, tb), ub)
    loss = loss_f + loss_u
    loss.backward(retain_graph=True)  # expect: OOM107
    adam.step()
    if it % 500 == 0:
        log.append((it, loss.item(), loss_f.item(), loss_u.item()))
        print(f"adam {it}: loss {loss.item():.3e} (pde {loss_f.item():.3e}, data {loss_u.item():.3e})")

lbfgs = torch.optim.LBFGS(model.parameters(), lr=1.0, max_iter=5000, tolerance_grad=1e-9,
                          history_size=50, line_search_fn="strong_wolfe")


def closure():
    lbfgs.zero_grad()
    f = residual(model, x_f, t_f)
    loss = (f ** 2).mean() + mse(model(x0, t0), u0) + mse(model(xb, tb), ub)
    loss.backward()
    return loss


lbfgs.step(closure)

with torch.no_grad():
    xs = torch.linspace(-1, 1, 256, device=device)
    ts = torch.linspace(0, 1, 100, device=device)
    X, T = torch.meshgrid(xs, ts, indexing="ij")
    U = model(X.reshape(-1, 1), T.reshape(-1, 1)).reshape(256, 100)
np.save("burgers_u.npy", U.cpu().numpy())
np.save("burgers_log.npy", np.array(log))
