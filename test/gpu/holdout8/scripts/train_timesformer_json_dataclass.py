"""TimeSformer (divided space-time attention, Bertasius et al. 2021) on Kinetics-400-style clips.

Hyper-parameters are read from configs/timesformer_k400.json (relative to the working directory) into
dataclasses; token counts are derived properties. Each block attends over time (per patch), then over space
(per frame), then runs its MLP. fp16 autocast + GradScaler, SGD with momentum as in the paper.
"""
import json
import time
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

CONFIG_PATH = "configs/timesformer_k400.json"


@dataclass
class ModelCfg:
    img_size: int = 224
    patch_size: int = 16
    num_frames: int = 8
    embed_dim: int = 768
    depth: int = 12
    num_heads: int = 12
    mlp_ratio: float = 4.0
    drop_path_rate: float = 0.1
    num_classes: int = 400

    @property
    def grid(self):
        return self.img_size // self.patch_size

    @property
    def num_patches(self):
        return self.grid * self.grid

    @property
    def tokens_per_clip(self):
        return self.num_patches * self.num_frames


@dataclass
class OptimCfg:
    batch_size: int = 8
    base_lr: float = 0.005
    momentum: float = 0.9
    weight_decay: float = 1e-4
    max_steps: int = 10
    fp16: bool = True


class Attention(nn.Module):
    def __init__(self, dim, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, C // self.num_heads).permute(2, 0, 3, 1, 4)
        out = F.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2])
        return self.proj(out.transpose(1, 2).reshape(B, N, C))


class DropPath(nn.Module):
    def __init__(self, p=0.0):
        super().__init__()
        self.p = p

    def forward(self, x):
        if self.p == 0.0 or not self.training:
            return x
        mask = torch.rand(x.shape[0], 1, 1, device=x.device) >= self.p
        return x * mask / (1 - self.p)


class DividedBlock(nn.Module):
    def __init__(self, cfg: ModelCfg, drop_path):
        super().__init__()
        d = cfg.embed_dim
        self.T, self.N = cfg.num_frames, cfg.num_patches
        self.temporal_norm1 = nn.LayerNorm(d)
        self.temporal_attn = Attention(d, cfg.num_heads)
        self.temporal_fc = nn.Linear(d, d)
        self.norm1 = nn.LayerNorm(d)
        self.attn = Attention(d, cfg.num_heads)
        self.norm2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, int(d * cfg.mlp_ratio)), nn.GELU(), nn.Linear(int(d * cfg.mlp_ratio), d))
        self.drop_path = DropPath(drop_path)

    def forward(self, x):
        B, _, D = x.shape
        T, N = self.T, self.N
        # temporal attention: sequences of T frames for every patch position
        xt = x.reshape(B, T, N, D).transpose(1, 2).reshape(B * N, T, D)
        res_t = self.temporal_fc(self.temporal_attn(self.temporal_norm1(xt)))
        res_t = res_t.reshape(B, N, T, D).transpose(1, 2).reshape(B, T * N, D)
        x = x + self.drop_path(res_t)
        # spatial attention: sequences of N patches for every frame
        xs = x.reshape(B * T, N, D)
        res_s = self.attn(self.norm1(xs)).reshape(B, T * N, D)
        x = x + self.drop_path(res_s)
        return x + self.drop_path(self.mlp(self.norm2(x)))


class TimeSformer(nn.Module):
    def __init__(self, cfg: ModelCfg):
        super().__init__()
        self.cfg = cfg
        self.patch_embed = nn.Conv2d(3, cfg.embed_dim, kernel_size=cfg.patch_size, stride=cfg.patch_size)
        self.pos_embed = nn.Parameter(torch.zeros(1, cfg.num_patches, cfg.embed_dim))
        self.time_embed = nn.Parameter(torch.zeros(1, cfg.num_frames, cfg.embed_dim))
        nn.init.trunc_normal_(self.pos_embed, std=0.02)
        nn.init.trunc_normal_(self.time_embed, std=0.02)
        dpr = [x.item() for x in torch.linspace(0, cfg.drop_path_rate, cfg.depth)]
        self.blocks = nn.ModuleList([DividedBlock(cfg, dpr[i]) for i in range(cfg.depth)])
        self.norm = nn.LayerNorm(cfg.embed_dim)
        self.head = nn.Linear(cfg.embed_dim, cfg.num_classes)

    def forward(self, video):                               # (B, C, T, H, W)
        B, C, T, H, W = video.shape
        x = video.transpose(1, 2).reshape(B * T, C, H, W)
        x = self.patch_embed(x).flatten(2).transpose(1, 2)  # (B*T, N, D)
        x = x + self.pos_embed
        x = x.reshape(B, T, -1, self.cfg.embed_dim) + self.time_embed[:, :, None, :]
        x = x.reshape(B, T * self.cfg.num_patches, self.cfg.embed_dim)
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.norm(x).mean(dim=1))


class KineticsStub(Dataset):
    def __init__(self, n, cfg: ModelCfg):
        self.n, self.cfg = n, cfg

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        c = self.cfg
        return torch.randn(3, c.num_frames, c.img_size, c.img_size), torch.randint(c.num_classes, ()).item()


def main():
    with open(CONFIG_PATH) as f:
        raw = json.load(f)
    mcfg, ocfg = ModelCfg(**raw["model"]), OptimCfg(**raw["optim"])
    print(f"{mcfg.num_frames} frames x {mcfg.num_patches} patches = {mcfg.tokens_per_clip} tokens per clip")

    device = torch.device("cuda")
    model = TimeSformer(mcfg).to(device)
    print(f"{sum(p.numel() for p in model.parameters()) / 1e6:.1f}M parameters")

    optimizer = torch.optim.SGD(model.parameters(), lr=ocfg.base_lr, momentum=ocfg.momentum,
                                weight_decay=ocfg.weight_decay, nesterov=True)
    scaler = torch.amp.GradScaler("cuda", enabled=ocfg.fp16)
    loader = DataLoader(KineticsStub(ocfg.batch_size * ocfg.max_steps, mcfg), batch_size=ocfg.batch_size,
                        shuffle=True, num_workers=4, drop_last=True)

    model.train()
    t0 = time.time()
    step = 0
    while step < ocfg.max_steps:
        for clips, labels in loader:
            clips, labels = clips.to(device, non_blocking=True), labels.to(device, non_blocking=True)
            with torch.autocast("cuda", dtype=torch.float16, enabled=ocfg.fp16):
                loss = F.cross_entropy(model(clips), labels)
            optimizer.zero_grad()
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            step += 1
            print(f"step {step} loss {loss.item():.4f} scale {scaler.get_scale():.0f} ({time.time() - t0:.1f}s)")
            if step >= ocfg.max_steps:
                break
    print(f"peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
