"""ViT-L/16-sized classifier written from scratch: einsum attention, fixed 2-D sin-cos position embedding stored
with register_buffer, and activation checkpointing through torch.utils.checkpoint.checkpoint inside forward()."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint
from torch.utils.data import DataLoader, Dataset

cfg = {
    "model": {"img_size": 224, "patch": 16, "dim": 1024, "depth": 24, "heads": 16, "mlp_ratio": 4.0,
              "num_classes": 1000, "grad_ckpt": True},
    "train": {"batch_size": 64, "lr": 1e-4, "weight_decay": 0.05, "steps": 3, "amp": "fp16"},
}


def sincos_2d(grid, dim):
    y, x = torch.meshgrid(torch.arange(grid, dtype=torch.float32), torch.arange(grid, dtype=torch.float32),
                          indexing="ij")
    omega = 1.0 / (10000 ** (torch.arange(dim // 4, dtype=torch.float32) / (dim // 4)))
    y = y.flatten()[:, None] * omega[None, :]
    x = x.flatten()[:, None] * omega[None, :]
    return torch.cat([x.sin(), x.cos(), y.sin(), y.cos()], dim=1)


class Attention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.scale = (dim // heads) ** -0.5
        self.to_qkv = nn.Linear(dim, dim * 3, bias=True)
        self.to_out = nn.Linear(dim, dim)

    def forward(self, x):
        b, n, d = x.shape
        qkv = self.to_qkv(x).reshape(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        dots = torch.einsum("bhid,bhjd->bhij", q, k) * self.scale
        attn = dots.softmax(dim=-1)
        out = torch.einsum("bhij,bhjd->bhid", attn, v)
        return self.to_out(out.transpose(1, 2).reshape(b, n, d))


class Block(nn.Module):
    def __init__(self, dim, heads, mlp_ratio):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, eps=1e-6)
        self.attn = Attention(dim, heads)
        self.norm2 = nn.LayerNorm(dim, eps=1e-6)
        hidden = int(dim * mlp_ratio)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim))

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class ViT(nn.Module):
    def __init__(self, img_size, patch, dim, depth, heads, mlp_ratio, num_classes, grad_ckpt=False):
        super().__init__()
        self.grad_ckpt = grad_ckpt
        self.patch_embed = nn.Conv2d(3, dim, kernel_size=patch, stride=patch)
        grid = img_size // patch
        self.register_buffer("pos_embed", sincos_2d(grid, dim).unsqueeze(0), persistent=False)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.blocks = nn.ModuleList([Block(dim, heads, mlp_ratio) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.head = nn.Linear(dim, num_classes)

    def forward(self, img):
        x = self.patch_embed(img).flatten(2).transpose(1, 2) + self.pos_embed
        x = torch.cat([self.cls_token.expand(x.size(0), -1, -1), x], dim=1)
        for blk in self.blocks:
            if self.grad_ckpt and self.training:
                x = checkpoint(blk, x, use_reentrant=False)
            else:
                x = blk(x)
        return self.head(self.norm(x[:, 0]))


class RandomImageNet(Dataset):
    def __init__(self, n, size, classes):
        self.n, self.size, self.classes = n, size, classes

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.randn(3, self.size, self.size), i % self.classes


def main():
    mc, tc = cfg["model"], cfg["train"]
    model = ViT(**mc).cuda()
    print(f"{sum(p.numel() for p in model.parameters()) / 1e6:.1f}M parameters")
    opt = torch.optim.AdamW(model.parameters(), lr=tc["lr"], weight_decay=tc["weight_decay"], foreach=False)
    scaler = torch.amp.GradScaler("cuda", enabled=tc["amp"] == "fp16")
    loader = DataLoader(RandomImageNet(tc["batch_size"] * tc["steps"], mc["img_size"], mc["num_classes"]),
                        batch_size=tc["batch_size"], num_workers=4, shuffle=True)
    model.train()
    for step, (x, y) in enumerate(loader):
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        with torch.autocast("cuda", dtype=torch.float16, enabled=tc["amp"] == "fp16"):
            loss = F.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()
        print(f"step {step}: loss {loss.item():.4f} scale {scaler.get_scale()}")
    print("peak %.2f GiB" % (torch.cuda.max_memory_allocated() / 2**30))


if __name__ == "__main__":
    main()
