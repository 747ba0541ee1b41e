"""物理信息神经网络（PINN）求解粘性 Burgers 方程：先用 Adam 预热，再用 L-BFGS（strong Wolfe 线搜索）。"""
import math

import torch
import torch.nn as nn

torch.manual_seed(0)
NU = 0.01 / math.pi          # 粘性系数
N_COLLOCATION = 65536        # 内部配点数，残差在这些点上计算
N_BOUNDARY = 4096
WIDTH = 512
DEPTH = 8
ADAM_STEPS = 5
LBFGS_OUTER = 3


class MLP(nn.Module):
    def __init__(self, width=WIDTH, depth=DEPTH):
        super().__init__()
        layers = [nn.Linear(2, width), nn.Tanh()]
        for _ in range(depth - 1):
            layers += [nn.Linear(width, width), nn.Tanh()]
        layers.append(nn.Linear(width, 1))
        self.net = nn.Sequential(*layers)

    def forward(self, t, x):
        return self.net(torch.cat([t, x], dim=1))


def residual(model, t, x):
    # 用 autograd 求 u_t, u_x, u_xx；create_graph=True 以便对残差再求导
    u = model(t, x)
    u_t, u_x = torch.autograd.grad(u, (t, x), torch.ones_like(u), create_graph=True)
    u_xx = torch.autograd.grad(u_x, x, torch.ones_like(u_x), create_graph=True)[0]
    return u_t + u * u_x - NU * u_xx


dev = "cuda"
t_f = torch.rand(N_COLLOCATION, 1, device=dev, requires_grad=True)
x_f = (torch.rand(N_COLLOCATION, 1, device=dev) * 2 - 1).requires_grad_(True)
# 初始条件 u(0, x) = -sin(pi x)
x_0 = torch.rand(N_BOUNDARY, 1, device=dev) * 2 - 1
t_0 = torch.zeros_like(x_0)
u_0 = -torch.sin(math.pi * x_0)
# 边界条件 u(t, -1) = u(t, 1) = 0
t_b = torch.rand(N_BOUNDARY, 1, device=dev)
x_b = torch.where(torch.rand_like(t_b) < 0.5, -1.0, 1.0)

model = MLP().to(dev)


def loss_fn():
    f = residual(model, t_f, x_f)
    l_f = (f ** 2).mean()
    l_0 = ((model(t_0, x_0) - u_0) ** 2).mean()
    l_b = (model(t_b, x_b) ** 2).mean()
    return l_f + l_0 + l_b


adam = torch.optim.Adam(model.parameters(), lr=1e-3)
for it in range(ADAM_STEPS):
    adam.zero_grad()
    loss = loss_fn()
    loss.backward()
    adam.step()
    print(f"adam {it} loss {loss.item():.3e}")

# L-BFGS 每次 step 会多次调用 closure；history_size 决定保存多少组曲率向量
lbfgs = torch.optim.LBFGS(model.parameters(), lr=1.0, max_iter=20, history_size=50,
                          tolerance_grad=1e-9, tolerance_change=1e-12, line_search_fn="strong_wolfe")


def closure():
    lbfgs.zero_grad()
    loss = loss_fn()
    loss.backward()
    return loss


for outer in range(LBFGS_OUTER):
    loss = lbfgs.step(closure)
    print(f"lbfgs {outer} loss {loss.item():.3e}")
