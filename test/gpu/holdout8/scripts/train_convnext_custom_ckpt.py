"""ConvNeXt-S written out by hand, with activation checkpointing on every block
(torch.utils.checkpoint.checkpoint, non-reentrant) so that batch 256 fits; disable with --no-grad-ckpt.

bf16 autocast, AdamW, cosine schedule, stochastic depth, layer scale.
"""
import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint
from torch.utils.data import DataLoader, Dataset


class LayerNorm2d(nn.LayerNorm):
    """LayerNorm over channels of an NCHW tensor."""

    def forward(self, x):
        x = x.permute(0, 2, 3, 1)
        x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        return x.permute(0, 3, 1, 2)


class DropPath(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.p = p

    def forward(self, x):
        if not self.training or self.p == 0.0:
            return x
        keep = 1 - self.p
        mask = x.new_empty((x.shape[0],) + (1,) * (x.ndim - 1)).bernoulli_(keep)
        return x * mask / keep


class ConvNeXtBlock(nn.Module):
    def __init__(self, dim, drop_path=0.0, layer_scale_init=1e-6):
        super().__init__()
        self.dwconv = nn.Conv2d(dim, dim, kernel_size=7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.pwconv1 = nn.Linear(dim, 4 * dim)
        self.act = nn.GELU()
        self.pwconv2 = nn.Linear(4 * dim, dim)
        self.gamma = nn.Parameter(layer_scale_init * torch.ones(dim))
        self.drop_path = DropPath(drop_path)

    def forward(self, x):
        shortcut = x
        x = self.dwconv(x)
        x = x.permute(0, 2, 3, 1)
        x = self.pwconv2(self.act(self.pwconv1(self.norm(x))))
        x = (self.gamma * x).permute(0, 3, 1, 2)
        return shortcut + self.drop_path(x)


class Stage(nn.Module):
    def __init__(self, in_dim, dim, depth, dp_rates, downsample, grad_ckpt):
        super().__init__()
        self.grad_ckpt = grad_ckpt
        if downsample:
            self.downsample = nn.Sequential(LayerNorm2d(in_dim, eps=1e-6), nn.Conv2d(in_dim, dim, 2, stride=2))
        else:
            self.downsample = nn.Identity()
        self.blocks = nn.ModuleList([ConvNeXtBlock(dim, dp_rates[i]) for i in range(depth)])

    def forward(self, x):
        x = self.downsample(x)
        for blk in self.blocks:
            if self.grad_ckpt and self.training:
                x = checkpoint(blk, x, use_reentrant=False)
            else:
                x = blk(x)
        return x


class ConvNeXt(nn.Module):
    def __init__(self, num_classes=1000, depths=(3, 3, 27, 3), dims=(96, 192, 384, 768), drop_path_rate=0.4,
                 grad_ckpt=True):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, dims[0], kernel_size=4, stride=4), LayerNorm2d(dims[0], eps=1e-6))
        dp = torch.linspace(0, drop_path_rate, sum(depths)).tolist()
        stages, cur, prev = [], 0, dims[0]
        for i, (depth, dim) in enumerate(zip(depths, dims)):
            stages.append(Stage(prev, dim, depth, dp[cur:cur + depth], downsample=i > 0, grad_ckpt=grad_ckpt))
            cur += depth
            prev = dim
        self.stages = nn.Sequential(*stages)
        self.norm = nn.LayerNorm(dims[-1], eps=1e-6)
        self.head = nn.Linear(dims[-1], num_classes)
        self.apply(self._init)

    @staticmethod
    def _init(m):
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            nn.init.trunc_normal_(m.weight, std=0.02)
            nn.init.zeros_(m.bias)

    def forward(self, x):
        x = self.stages(self.stem(x))
        return self.head(self.norm(x.mean((-2, -1))))


class ImageNetStub(Dataset):
    def __init__(self, n, size):
        self.n, self.size = n, size

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.randn(3, self.size, self.size), torch.randint(1000, ()).item()


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--input-size", type=int, default=224)
    p.add_argument("--depths", type=int, nargs=4, default=[3, 3, 27, 3])
    p.add_argument("--dims", type=int, nargs=4, default=[96, 192, 384, 768])
    p.add_argument("--drop-path", type=float, default=0.4)
    p.add_argument("--no-grad-ckpt", action="store_false", dest="grad_ckpt")
    p.add_argument("--lr", type=float, default=4e-3)
    p.add_argument("--weight-decay", type=float, default=0.05)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--num-workers", type=int, default=8)
    return p.parse_args()


def main():
    args = parse_args()
    device = torch.device("cuda")
    model = ConvNeXt(depths=args.depths, dims=args.dims, drop_path_rate=args.drop_path,
                     grad_ckpt=args.grad_ckpt).to(device)
    print(f"ConvNeXt {args.depths} {args.dims}: {sum(p.numel() for p in model.parameters()) / 1e6:.1f}M params, "
          f"grad_ckpt={args.grad_ckpt}")

    decay = [p for n, p in model.named_parameters() if p.ndim > 1]
    no_decay = [p for n, p in model.named_parameters() if p.ndim <= 1]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": args.weight_decay},
                                   {"params": no_decay, "weight_decay": 0.0}], lr=args.lr)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: 0.5 * (1 + math.cos(math.pi * s / args.steps)))
    loader = DataLoader(ImageNetStub(args.batch_size * args.steps, args.input_size), batch_size=args.batch_size,
                        shuffle=True, num_workers=args.num_workers, pin_memory=True, drop_last=True)

    model.train()
    t0 = time.time()
    for step, (x, y) in enumerate(loader):
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.cross_entropy(model(x), y, label_smoothing=0.1)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        scheduler.step()
        print(f"step {step} loss {loss.item():.4f} ({time.time() - t0:.1f}s)")
    print(f"peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
