"""WGAN-GP on CIFAR-10 with small helper functions for the optimizer bookkeeping.

- critic steps clear gradients through reset_grads() (p.grad = None),
- generator steps go through amp_step(), which steps, updates the scaler and clears,
- the gradient penalty uses torch.autograd.grad(create_graph=True, retain_graph=True).
"""
import argparse

import torch
import torch.nn as nn
from torch.utils.data import DataLoader
from torchvision import datasets, transforms
from torchvision.utils import save_image

NZ = 128


def reset_grads(module):
    for p in module.parameters():
        p.grad = None


def amp_step(optimizer, scaler):
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)


class Generator(nn.Module):
    def __init__(self, ngf=64):
        super().__init__()
        self.net = nn.Sequential(
            nn.ConvTranspose2d(NZ, ngf * 8, 4, 1, 0), nn.BatchNorm2d(ngf * 8), nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 8, ngf * 4, 4, 2, 1), nn.BatchNorm2d(ngf * 4), nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1), nn.BatchNorm2d(ngf * 2), nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, 3, 4, 2, 1), nn.Tanh(),
        )

    def forward(self, z):
        return self.net(z.view(z.size(0), NZ, 1, 1))


class Critic(nn.Module):
    def __init__(self, ndf=64):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(3, ndf, 4, 2, 1), nn.LeakyReLU(0.2, True),
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1), nn.LayerNorm([ndf * 2, 8, 8]), nn.LeakyReLU(0.2, True),
            nn.Conv2d(ndf * 2, ndf * 4, 4, 2, 1), nn.LayerNorm([ndf * 4, 4, 4]), nn.LeakyReLU(0.2, True),
            nn.Conv2d(ndf * 4, 1, 4, 1, 0),
        )

    def forward(self, x):
        return self.net(x).view(-1)


def gradient_penalty(critic, real, fake):
    alpha = torch.rand(real.size(0), 1, 1, 1, device=real.device)
    interp = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    scores = critic(interp)
    grads, = torch.autograd.grad(scores.sum(), interp, create_graph=True, retain_graph=True)
    return ((grads.view(grads.size(0), -1).norm(2, dim=1) - 1) ** 2).mean()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=100000)
    ap.add_argument("--n-critic", type=int, default=5)
    ap.add_argument("--lambda-gp", type=float, default=10.0)
    args = ap.parse_args()
    device = torch.device("cuda")

    ds = datasets.CIFAR10("data", train=True, download=True,
                          transform=transforms.Compose([transforms.ToTensor(), transforms.Normalize([0.5] * 3, [0.5] * 3)]))
    loader = DataLoader(ds, batch_size=64, shuffle=True, num_workers=4, drop_last=True)

    G, D = Generator().to(device), Critic().to(device)
    opt_g = torch.optim.Adam(G.parameters(), lr=1e-4, betas=(0.0, 0.9))
    opt_d = torch.optim.Adam(D.parameters(), lr=1e-4, betas=(0.0, 0.9))
    scaler_g = torch.amp.GradScaler("cuda")
    fixed = torch.randn(64, NZ, device=device)
    w_dist = []

    data_iter = iter(loader)
    for it in range(args.iters):
        for _ in range(args.n_critic):
            try:
                real, _ = next(data_iter)
            except StopIteration:
                data_iter = iter(loader)
                real, _ = next(data_iter)
            real = real.to(device)
            z = torch.randn(real.size(0), NZ, device=device)
            with torch.no_grad():
                fake = G(z)
            reset_grads(D)
            d_real = D(real).mean()
            d_fake = D(fake).mean()
            gp = gradient_penalty(D, real, fake)
            d_loss = d_fake - d_real + args.lambda_gp * gp
            d_loss.backward()
            opt_d.step()
        w_dist.append((d_real - d_fake).item())

        z = torch.randn(64, NZ, device=device)
        with torch.autocast("cuda", dtype=torch.float16):
            g_loss = -D(G(z)).mean()
        scaler_g.scale(g_loss).backward()
        amp_step(opt_g, scaler_g)
        reset_grads(D)  # D got gradients from the G step too

        if it % 1000 == 0:
            print(f"iter {it}: W {w_dist[-1]:.3f} g_loss {g_loss.item():.3f}")
            with torch.no_grad():
                save_image(G(fixed) * 0.5 + 0.5, f"wgan_{it:06d}.png")


if __name__ == "__main__":
    main()
