# -*- coding: utf-8 -*-
# DDPM 训练脚本（64x64），U-Net 带时间步嵌入 + EMA
# 数据用随机张量代替，真实数据集换成 ImageFolder 即可
import copy
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

# ---------------- 超参数 ----------------
IMG_SIZE = 64
BATCH = 64
BASE_CH = 128
CH_MULT = (1, 2, 2, 2)
NUM_RES_BLOCKS = 2
ATTN_RES = (16,)          # 在 16x16 分辨率上加自注意力
DROPOUT = 0.1
T_STEPS = 1000
LR = 2e-4
EMA_DECAY = 0.9999
TRAIN_ITERS = 6
TIME_DIM = BASE_CH * 4    # 时间嵌入维度 = 4 * 基础通道数


def timestep_embedding(t, dim):
    """正弦时间步编码"""
    half = dim // 2
    freqs = torch.exp(-math.log(10000) * torch.arange(half, device=t.device, dtype=torch.float32) / half)
    args = t.float()[:, None] * freqs[None]
    return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)


class TimestepBlock(nn.Module):
    """需要时间嵌入的模块的基类"""

    def forward(self, x, emb):
        raise NotImplementedError


class TimestepSequential(nn.Sequential, TimestepBlock):
    def forward(self, x, emb):
        for layer in self:
            x = layer(x, emb) if isinstance(layer, TimestepBlock) else layer(x)
        return x


def GroupNorm32(ch):
    return nn.GroupNorm(32, ch)


class ResBlock(TimestepBlock):
    def __init__(self, in_ch, out_ch, emb_dim, dropout):
        super().__init__()
        self.in_layers = nn.Sequential(GroupNorm32(in_ch), nn.SiLU(), nn.Conv2d(in_ch, out_ch, 3, padding=1))
        self.emb_layers = nn.Sequential(nn.SiLU(), nn.Linear(emb_dim, out_ch))
        self.out_layers = nn.Sequential(GroupNorm32(out_ch), nn.SiLU(), nn.Dropout(dropout),
                                        nn.Conv2d(out_ch, out_ch, 3, padding=1))
        self.skip = nn.Identity() if in_ch == out_ch else nn.Conv2d(in_ch, out_ch, 1)

    def forward(self, x, emb):
        h = self.in_layers(x)
        h = h + self.emb_layers(emb)[:, :, None, None]
        h = self.out_layers(h)
        return self.skip(x) + h


class AttnBlock(nn.Module):
    def __init__(self, ch, heads=4):
        super().__init__()
        self.norm = GroupNorm32(ch)
        self.qkv = nn.Conv2d(ch, ch * 3, 1)
        self.proj = nn.Conv2d(ch, ch, 1)
        self.heads = heads

    def forward(self, x):
        b, c, h, w = x.shape
        q, k, v = self.qkv(self.norm(x)).reshape(b, 3, self.heads, c // self.heads, h * w).unbind(1)
        out = F.scaled_dot_product_attention(q.transpose(-1, -2), k.transpose(-1, -2), v.transpose(-1, -2))
        out = out.transpose(-1, -2).reshape(b, c, h, w)
        return x + self.proj(out)


class Downsample(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.op = nn.Conv2d(ch, ch, 3, stride=2, padding=1)

    def forward(self, x):
        return self.op(x)


class Upsample(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.conv = nn.Conv2d(ch, ch, 3, padding=1)

    def forward(self, x):
        return self.conv(F.interpolate(x, scale_factor=2, mode="nearest"))


class UNet(nn.Module):
    def __init__(self, img_size, base_ch, ch_mult, num_res_blocks, attn_res, dropout, time_dim):
        super().__init__()
        self.base_ch = base_ch
        self.time_embed = nn.Sequential(nn.Linear(base_ch, time_dim), nn.SiLU(), nn.Linear(time_dim, time_dim))
        self.input_blocks = nn.ModuleList([TimestepSequential(nn.Conv2d(3, base_ch, 3, padding=1))])
        skip_chs = [base_ch]
        ch, res = base_ch, img_size
        # 下采样路径
        for level, mult in enumerate(ch_mult):
            for _ in range(num_res_blocks):
                layers = [ResBlock(ch, base_ch * mult, time_dim, dropout)]
                ch = base_ch * mult
                if res in attn_res:
                    layers.append(AttnBlock(ch))
                self.input_blocks.append(TimestepSequential(*layers))
                skip_chs.append(ch)
            if level != len(ch_mult) - 1:
                self.input_blocks.append(TimestepSequential(Downsample(ch)))
                skip_chs.append(ch)
                res //= 2
        self.middle = TimestepSequential(ResBlock(ch, ch, time_dim, dropout), AttnBlock(ch),
                                         ResBlock(ch, ch, time_dim, dropout))
        # 上采样路径（每层多一个 block，吃掉 skip）
        self.output_blocks = nn.ModuleList()
        for level, mult in list(enumerate(ch_mult))[::-1]:
            for i in range(num_res_blocks + 1):
                layers = [ResBlock(ch + skip_chs.pop(), base_ch * mult, time_dim, dropout)]
                ch = base_ch * mult
                if res in attn_res:
                    layers.append(AttnBlock(ch))
                if level and i == num_res_blocks:
                    layers.append(Upsample(ch))
                    res *= 2
                self.output_blocks.append(TimestepSequential(*layers))
        self.out = nn.Sequential(GroupNorm32(ch), nn.SiLU(), nn.Conv2d(ch, 3, 3, padding=1))

    def forward(self, x, t):
        emb = self.time_embed(timestep_embedding(t, self.base_ch))
        hs = []
        h = x
        for blk in self.input_blocks:
            h = blk(h, emb)
            hs.append(h)
        h = self.middle(h, emb)
        for blk in self.output_blocks:
            h = blk(torch.cat([h, hs.pop()], dim=1), emb)
        return self.out(h)


class NoiseImages(Dataset):
    def __init__(self, n, size):
        self.n, self.size = n, size

    def __len__(self):
        return self.n

    def __getitem__(self, idx):
        return torch.rand(3, self.size, self.size) * 2 - 1   # 归一化到 [-1, 1]


@torch.no_grad()
def ema_update(ema, model, decay):
    for pe, p in zip(ema.parameters(), model.parameters()):
        pe.mul_(decay).add_(p.detach(), alpha=1 - decay)


def main():
    device = "cuda"
    model = UNet(IMG_SIZE, BASE_CH, CH_MULT, NUM_RES_BLOCKS, ATTN_RES, DROPOUT, TIME_DIM).to(device)
    ema = copy.deepcopy(model).eval().requires_grad_(False)   # EMA 权重也在显存里
    print("参数量: %.1fM" % (sum(p.numel() for p in model.parameters()) / 1e6))

    betas = torch.linspace(1e-4, 0.02, T_STEPS, device=device)
    alphas_bar = torch.cumprod(1 - betas, dim=0)

    opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=0.0)
    scaler = torch.amp.GradScaler("cuda", init_scale=4096)
    loader = DataLoader(NoiseImages(BATCH * TRAIN_ITERS, IMG_SIZE), batch_size=BATCH, shuffle=True,
                        num_workers=2, drop_last=True)

    model.train()
    for it, x0 in enumerate(loader):
        x0 = x0.to(device)
        t = torch.randint(0, T_STEPS, (x0.size(0),), device=device)
        noise = torch.randn_like(x0)
        ab = alphas_bar[t].view(-1, 1, 1, 1)
        xt = ab.sqrt() * x0 + (1 - ab).sqrt() * noise     # 前向加噪
        with torch.autocast("cuda", dtype=torch.float16):
            pred = model(xt, t)
            loss = F.mse_loss(pred.float(), noise)
        opt.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()
        ema_update(ema, model, EMA_DECAY)
        print(f"iter {it}: loss {loss.item():.5f}")

    print("显存峰值: %.2f GiB" % (torch.cuda.max_memory_allocated() / 1024 ** 3))


if __name__ == "__main__":
    main()
