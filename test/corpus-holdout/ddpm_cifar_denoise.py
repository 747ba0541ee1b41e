"""DDPM on CIFAR-10 (epsilon-prediction, linear beta schedule, EMA weights).

Clean reference run used for the ablation table; everything here is intentional.
"""
import argparse
import copy
import math
import os

# only a default: a launcher or the shell may already have chosen the device
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "0")

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from torchvision.utils import save_image

CFG = dict(T=1000, beta_start=1e-4, beta_end=0.02, ch=64, lr=2e-4, bs=128, epochs=400,
           ema_decay=0.9999, sample_every=10, amp=True)


def timestep_embedding(t, dim):
    half = dim // 2
    freqs = torch.exp(-math.log(10000) * torch.arange(half, device=t.device) / half)
    args = t.float()[:, None] * freqs[None]
    return torch.cat([args.sin(), args.cos()], dim=1)


class Block(nn.Module):
    def __init__(self, cin, cout, tdim):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, padding=1)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1)
        self.temb = nn.Linear(tdim, cout)
        self.norm = nn.GroupNorm(8, cout)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x, temb):
        h = F.silu(self.conv1(x)) + self.temb(temb)[:, :, None, None]
        return F.silu(self.norm(self.conv2(h))) + self.skip(x)


class TinyUNet(nn.Module):
    def __init__(self, ch=64, mults=(1, 2, 2)):
        super().__init__()
        self.tdim = ch * 4
        self.t_mlp = nn.Sequential(nn.Linear(ch, self.tdim), nn.SiLU(), nn.Linear(self.tdim, self.tdim))
        self.inp = nn.Conv2d(3, ch, 3, padding=1)
        chans = [ch * m for m in mults]
        self.down = nn.ModuleList()
        c = ch
        for co in chans:
            self.down.append(Block(c, co, self.tdim))
            c = co
        self.mid = Block(c, c, self.tdim)
        self.up = nn.ModuleList()
        for co in reversed(chans):
            self.up.append(Block(c + co, co, self.tdim))
            c = co
        self.out = nn.Conv2d(c, 3, 3, padding=1)

    def forward(self, x, t):
        temb = self.t_mlp(timestep_embedding(t, self.tdim // 4))
        h = self.inp(x)
        skips = []
        for blk in self.down:
            h = blk(h, temb)
            skips.append(h)
            h = F.avg_pool2d(h, 2)
        h = self.mid(h, temb)
        for blk in self.up:
            h = F.interpolate(h, scale_factor=2, mode="nearest")
            h = blk(torch.cat([h, skips.pop()], dim=1), temb)
        return self.out(h)


class Diffusion:
    def __init__(self, T, b0, b1, device):
        self.T = T
        self.betas = torch.linspace(b0, b1, T, device=device)
        self.alphas = 1.0 - self.betas
        self.abar = torch.cumprod(self.alphas, 0)

    def q_sample(self, x0, t, noise):
        a = self.abar[t].sqrt()[:, None, None, None]
        s = (1 - self.abar[t]).sqrt()[:, None, None, None]
        return a * x0 + s * noise

    @torch.no_grad()
    def sample(self, model, n, device):
        x = torch.randn(n, 3, 32, 32, device=device)
        frames = []
        for i in reversed(range(self.T)):
            t = torch.full((n,), i, device=device, dtype=torch.long)
            eps = model(x, t)
            a, ab, b = self.alphas[i], self.abar[i], self.betas[i]
            x = (x - b / (1 - ab).sqrt() * eps) / a.sqrt()
            if i > 0:
                x = x + b.sqrt() * torch.randn_like(x)
            if i % 200 == 0:
                frames.append(x.clamp(-1, 1))
        return x, frames


@torch.no_grad()
def ema_update(ema, model, decay):
    for pe, pm in zip(ema.parameters(), model.parameters()):
        pe.mul_(decay).add_(pm, alpha=1 - decay)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="runs/ddpm")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    device = "cuda"
    tf = torchvision.transforms.Compose([torchvision.transforms.RandomHorizontalFlip(),
                                         torchvision.transforms.ToTensor(),
                                         torchvision.transforms.Normalize([0.5] * 3, [0.5] * 3)])
    ds = torchvision.datasets.CIFAR10("data", train=True, download=True, transform=tf)
    dl = torch.utils.data.DataLoader(ds, batch_size=CFG["bs"], shuffle=True, num_workers=8, drop_last=True)

    model = TinyUNet(CFG["ch"]).to(device)
    ema = copy.deepcopy(model).requires_grad_(False)
    diff = Diffusion(CFG["T"], CFG["beta_start"], CFG["beta_end"], device)
    opt = torch.optim.AdamW(model.parameters(), lr=CFG["lr"])
    scaler = torch.amp.GradScaler("cuda", enabled=CFG["amp"])

    loss_curve = []
    for epoch in range(CFG["epochs"]):
        running = 0.0
        for x0, _ in dl:
            x0 = x0.to(device, non_blocking=True)
            t = torch.randint(0, CFG["T"], (x0.size(0),), device=device)
            noise = torch.randn_like(x0)
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=CFG["amp"]):
                loss = F.mse_loss(model(diff.q_sample(x0, t, noise), t), noise)
            opt.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            ema_update(ema, model, CFG["ema_decay"])
            running += loss.detach()
        loss_curve.append((running / len(dl)).item())
        print(f"epoch {epoch} loss {loss_curve[-1]:.5f}")
        if (epoch + 1) % CFG["sample_every"] == 0:
            ema.eval()
            imgs, _ = diff.sample(ema, 64, device)
            save_image(imgs * 0.5 + 0.5, os.path.join(args.out, f"ep{epoch:04d}.png"), nrow=8)
            torch.cuda.empty_cache()  # once per sampling epoch, sampling allocates big buffers
    torch.save({"model": model.state_dict(), "ema": ema.state_dict(), "loss": loss_curve},
               os.path.join(args.out, "final.pt"))


if __name__ == "__main__":
    main()
