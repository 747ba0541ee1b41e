"""CapsNet (Sabour et al. 2017) with dynamic routing-by-agreement on 28x28 digits, margin + reconstruction loss.

Arguments are parsed from a string, the way it was run from a notebook.
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

parser = argparse.ArgumentParser()
parser.add_argument("--batch-size", type=int, default=128)
parser.add_argument("--routing-iters", type=int, default=3)
parser.add_argument("--epochs", type=int, default=1)
parser.add_argument("--lr", type=float, default=1e-3)
parser.add_argument("--recon-weight", type=float, default=0.0005)
parser.add_argument("--n-train", type=int, default=60000)
args = parser.parse_args("--batch-size 512 --routing-iters 3 --n-train 3072".split())


def squash(s, dim=-1, eps=1e-8):
    n2 = (s ** 2).sum(dim=dim, keepdim=True)
    return n2 / (1 + n2) * s / torch.sqrt(n2 + eps)


class PrimaryCaps(nn.Module):
    def __init__(self, in_ch=256, caps=32, dim=8):
        super().__init__()
        self.conv = nn.Conv2d(in_ch, caps * dim, kernel_size=9, stride=2)
        self.dim = dim

    def forward(self, x):
        out = self.conv(x)                                   # (B, 256, 6, 6)
        B = out.shape[0]
        out = out.view(B, 32, self.dim, 6, 6).permute(0, 1, 3, 4, 2).reshape(B, -1, self.dim)
        return squash(out)                                   # (B, 1152, 8)


class DigitCaps(nn.Module):
    def __init__(self, in_caps=1152, in_dim=8, n_classes=10, out_dim=16, iters=3):
        super().__init__()
        self.iters = iters
        self.W = nn.Parameter(0.01 * torch.randn(1, in_caps, n_classes, out_dim, in_dim))

    def forward(self, u):
        u = u[:, :, None, :, None]                           # (B, 1152, 1, 8, 1)
        u_hat = torch.matmul(self.W, u).squeeze(-1)          # (B, 1152, 10, 16)
        b = torch.zeros(u_hat.shape[:3], device=u.device)
        for i in range(self.iters):
            c = F.softmax(b, dim=2)
            s = (c.unsqueeze(-1) * u_hat).sum(dim=1)         # (B, 10, 16)
            v = squash(s)
            if i < self.iters - 1:
                b = b + (u_hat * v.unsqueeze(1)).sum(-1)
        return v


class CapsNet(nn.Module):
    def __init__(self, iters):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 256, kernel_size=9)
        self.primary = PrimaryCaps()
        self.digits = DigitCaps(iters=iters)
        self.decoder = nn.Sequential(nn.Linear(16 * 10, 512), nn.ReLU(inplace=True), nn.Linear(512, 1024),
                                     nn.ReLU(inplace=True), nn.Linear(1024, 784), nn.Sigmoid())

    def forward(self, x, y=None):
        v = self.digits(self.primary(F.relu(self.conv1(x))))
        lengths = v.norm(dim=-1)
        if y is None:
            y = lengths.argmax(dim=1)
        mask = F.one_hot(y, 10).float().unsqueeze(-1)
        recon = self.decoder((v * mask).flatten(1)).view(-1, 1, 28, 28)
        return lengths, recon


def margin_loss(lengths, y, m_pos=0.9, m_neg=0.1, lam=0.5):
    t = F.one_hot(y, 10).float()
    loss = t * F.relu(m_pos - lengths) ** 2 + lam * (1 - t) * F.relu(lengths - m_neg) ** 2
    return loss.sum(1).mean()


def main():
    images = torch.rand(args.n_train, 1, 28, 28)
    labels = torch.randint(0, 10, (args.n_train,))
    loader = DataLoader(TensorDataset(images, labels), batch_size=args.batch_size, shuffle=True, drop_last=True)
    model = CapsNet(args.routing_iters).cuda()
    print("params:", sum(p.numel() for p in model.parameters()))
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.96)
    for epoch in range(args.epochs):
        for i, (x, y) in enumerate(loader):
            x, y = x.cuda(), y.cuda()
            lengths, recon = model(x, y)
            loss = margin_loss(lengths, y) + args.recon_weight * F.mse_loss(recon, x, reduction="sum") / x.shape[0]
            opt.zero_grad()
            loss.backward()
            opt.step()
            acc = (lengths.argmax(1) == y).float().mean().item()
            print(f"epoch {epoch} batch {i} loss {loss.item():.4f} acc {acc:.3f}")
        sched.step()
    print(f"peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
