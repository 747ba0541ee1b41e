"""Continuous-depth image classifier (ODE-Net): two ODE blocks integrated with a hand-written fixed-step RK4
solver, backpropagating straight through the solver steps (no adjoint). 64x64 images, 200 classes.

    python train_neural_ode_rk4.py --ode-steps 6 --batch-size 256
"""
import argparse
import time
from functools import partial

import torch
import torch.nn as nn
import torch.nn.functional as F

ACTIVATION = "Softplus"
GROUPS = 32
Norm = partial(nn.GroupNorm, GROUPS)
conv3x3 = partial(nn.Conv2d, kernel_size=3, padding=1, bias=False)


def act():
    return getattr(nn, ACTIVATION)()


class ConcatConv2d(nn.Module):
    """3x3 conv that sees the time t as an extra constant channel."""

    def __init__(self, c_in, c_out):
        super().__init__()
        self.conv = conv3x3(c_in + 1, c_out)

    def forward(self, t, x):
        tt = torch.ones_like(x[:, :1]) * t
        return self.conv(torch.cat([tt, x], 1))


class ODEFunc(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm1 = Norm(dim)
        self.act1 = act()
        self.conv1 = ConcatConv2d(dim, dim)
        self.norm2 = Norm(dim)
        self.act2 = act()
        self.conv2 = ConcatConv2d(dim, dim)
        self.norm3 = Norm(dim)
        self.nfe = 0

    def forward(self, t, x):
        self.nfe += 1
        out = self.conv1(t, self.act1(self.norm1(x)))
        out = self.conv2(t, self.act2(self.norm2(out)))
        return self.norm3(out)


def rk4_integrate(func, y0, t0=0.0, t1=1.0, n_steps=6):
    h = (t1 - t0) / n_steps
    y, t = y0, t0
    for _ in range(n_steps):
        k1 = func(t, y)
        k2 = func(t + h / 2, y + h / 2 * k1)
        k3 = func(t + h / 2, y + h / 2 * k2)
        k4 = func(t + h, y + h * k3)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        t += h
    return y


class ODEBlock(nn.Module):
    def __init__(self, dim, n_steps):
        super().__init__()
        self.func = ODEFunc(dim)
        self.n_steps = n_steps

    def forward(self, x):
        return rk4_integrate(self.func, x, n_steps=self.n_steps)


class ODENet(nn.Module):
    def __init__(self, num_classes=200, width=64, n_steps=6):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, width, 3, 1, 1), Norm(width), act(),
                                  nn.Conv2d(width, width, 4, 2, 1))                 # 64 -> 32
        self.ode1 = ODEBlock(width, n_steps)
        self.down = nn.Sequential(Norm(width), act(), nn.Conv2d(width, 2 * width, 4, 2, 1))   # 32 -> 16
        self.ode2 = ODEBlock(2 * width, n_steps)
        self.head = nn.Sequential(Norm(2 * width), act(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                                  nn.Linear(2 * width, num_classes))

    def forward(self, x):
        return self.head(self.ode2(self.down(self.ode1(self.stem(x)))))


def get_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ode-steps", type=int, default=6)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--image-size", type=int, default=64)
    ap.add_argument("--width", type=int, default=64)
    ap.add_argument("--num-classes", type=int, default=200)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--iters", type=int, default=10)
    return ap.parse_args()


def main():
    args = get_args()
    device = "cuda"
    model = ODENet(args.num_classes, args.width, args.ode_steps).to(device)
    print(f"{sum(p.numel() for p in model.parameters()) / 1e6:.2f}M params")
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    t0 = time.time()
    for it in range(args.iters):
        x = torch.randn(args.batch_size, 3, args.image_size, args.image_size, device=device)
        y = torch.randint(0, args.num_classes, (args.batch_size,), device=device)
        model.ode1.func.nfe = model.ode2.func.nfe = 0
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"iter {it} loss {loss.item():.3f} nfe {model.ode1.func.nfe}+{model.ode2.func.nfe} "
              f"({time.time() - t0:.1f}s)")
    print(f"peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
