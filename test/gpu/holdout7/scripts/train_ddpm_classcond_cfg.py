"""Class-conditional DDPM on 128x128 images with classifier-free guidance dropout.

Small hand-written U-Net (ResBlocks + self-attention at 16x16), cosine noise schedule,
epsilon prediction, bf16 autocast. Data are random tensors standing in for a 128px dataset.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

IMAGE_SIZE = 128
BATCH_SIZE = 32
NUM_CLASSES = 100
BASE_CH = 128
CH_MULT = (1, 2, 2, 4)
ATTN_RES = (16,)
NUM_RES_BLOCKS = 2
TIMESTEPS = 1000
P_UNCOND = 0.1
LR = 1e-4
TRAIN_STEPS = 6


def cosine_alphas_cumprod(T, s=0.008):
    t = torch.linspace(0, T, T + 1, dtype=torch.float64) / T
    f = torch.cos((t + s) / (1 + s) * math.pi / 2) ** 2
    ac = f / f[0]
    betas = (1 - ac[1:] / ac[:-1]).clamp(max=0.999)
    return torch.cumprod(1 - betas, 0).float()


def timestep_embedding(t, dim):
    half = dim // 2
    freqs = torch.exp(-math.log(10000) * torch.arange(half, device=t.device) / half)
    args = t.float()[:, None] * freqs[None]
    return torch.cat([args.cos(), args.sin()], dim=-1)


class ResBlock(nn.Module):
    def __init__(self, c_in, c_out, emb_dim, dropout=0.1):
        super().__init__()
        self.norm1 = nn.GroupNorm(32, c_in)
        self.conv1 = nn.Conv2d(c_in, c_out, 3, padding=1)
        self.emb = nn.Linear(emb_dim, c_out * 2)
        self.norm2 = nn.GroupNorm(32, c_out)
        self.drop = nn.Dropout(dropout)
        self.conv2 = nn.Conv2d(c_out, c_out, 3, padding=1)
        self.skip = nn.Conv2d(c_in, c_out, 1) if c_in != c_out else nn.Identity()

    def forward(self, x, emb):
        h = self.conv1(F.silu(self.norm1(x)))
        scale, shift = self.emb(F.silu(emb))[:, :, None, None].chunk(2, dim=1)
        h = self.norm2(h) * (1 + scale) + shift
        h = self.conv2(self.drop(F.silu(h)))
        return h + self.skip(x)


class Attention(nn.Module):
    def __init__(self, ch, heads=4):
        super().__init__()
        self.heads = heads
        self.norm = nn.GroupNorm(32, ch)
        self.qkv = nn.Conv2d(ch, ch * 3, 1)
        self.proj = nn.Conv2d(ch, ch, 1)

    def forward(self, x):
        b, c, h, w = x.shape
        q, k, v = self.qkv(self.norm(x)).reshape(b, 3, self.heads, c // self.heads, h * w).unbind(1)
        out = F.scaled_dot_product_attention(q.transpose(-1, -2), k.transpose(-1, -2), v.transpose(-1, -2))
        return x + self.proj(out.transpose(-1, -2).reshape(b, c, h, w))


class UNet(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        emb_dim = BASE_CH * 4
        self.time_mlp = nn.Sequential(nn.Linear(BASE_CH, emb_dim), nn.SiLU(), nn.Linear(emb_dim, emb_dim))
        self.class_emb = nn.Embedding(num_classes + 1, emb_dim)   # last index = "no class"
        self.inp = nn.Conv2d(3, BASE_CH, 3, padding=1)
        self.down = nn.ModuleList()
        chans = [BASE_CH]
        ch, res = BASE_CH, IMAGE_SIZE
        for i, mult in enumerate(CH_MULT):
            for _ in range(NUM_RES_BLOCKS):
                blocks = [ResBlock(ch, BASE_CH * mult, emb_dim)]
                ch = BASE_CH * mult
                if res in ATTN_RES:
                    blocks.append(Attention(ch))
                self.down.append(nn.ModuleList(blocks))
                chans.append(ch)
            if i != len(CH_MULT) - 1:
                self.down.append(nn.ModuleList([nn.Conv2d(ch, ch, 3, stride=2, padding=1)]))
                chans.append(ch)
                res //= 2
        self.mid = nn.ModuleList([ResBlock(ch, ch, emb_dim), Attention(ch), ResBlock(ch, ch, emb_dim)])
        self.up = nn.ModuleList()
        for i, mult in reversed(list(enumerate(CH_MULT))):
            for j in range(NUM_RES_BLOCKS + 1):
                blocks = [ResBlock(ch + chans.pop(), BASE_CH * mult, emb_dim)]
                ch = BASE_CH * mult
                if res in ATTN_RES:
                    blocks.append(Attention(ch))
                if i != 0 and j == NUM_RES_BLOCKS:
                    blocks.append(nn.Upsample(scale_factor=2, mode="nearest"))
                    blocks.append(nn.Conv2d(ch, ch, 3, padding=1))
                    res *= 2
                self.up.append(nn.ModuleList(blocks))
        self.out = nn.Sequential(nn.GroupNorm(32, ch), nn.SiLU(), nn.Conv2d(ch, 3, 3, padding=1))

    @staticmethod
    def _run(blocks, h, emb):
        for blk in blocks:
            h = blk(h, emb) if isinstance(blk, ResBlock) else blk(h)
        return h

    def forward(self, x, t, y):
        emb = self.time_mlp(timestep_embedding(t, BASE_CH)) + self.class_emb(y)
        h = self.inp(x)
        hs = [h]
        for blocks in self.down:
            h = self._run(blocks, h, emb)
            hs.append(h)
        h = self._run(self.mid, h, emb)
        for blocks in self.up:
            h = self._run(blocks, torch.cat([h, hs.pop()], dim=1), emb)
        return self.out(h)


class RandomImages(Dataset):
    def __len__(self):
        return BATCH_SIZE * TRAIN_STEPS

    def __getitem__(self, i):
        return torch.rand(3, IMAGE_SIZE, IMAGE_SIZE) * 2 - 1, torch.randint(0, NUM_CLASSES, ()).item()


def main():
    device = torch.device("cuda")
    model = UNet(NUM_CLASSES).to(device)
    print(f"UNet params: {sum(p.numel() for p in model.parameters()) / 1e6:.1f}M")
    opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=0.0)
    alphas_cumprod = cosine_alphas_cumprod(TIMESTEPS).to(device)
    loader = DataLoader(RandomImages(), batch_size=BATCH_SIZE, shuffle=True, num_workers=4, drop_last=True)

    model.train()
    for step, (x0, y) in enumerate(loader):
        x0, y = x0.to(device), y.to(device)
        drop = torch.rand(y.shape[0], device=device) < P_UNCOND
        y = torch.where(drop, torch.full_like(y, NUM_CLASSES), y)
        t = torch.randint(0, TIMESTEPS, (x0.shape[0],), device=device)
        noise = torch.randn_like(x0)
        a = alphas_cumprod[t].view(-1, 1, 1, 1)
        xt = a.sqrt() * x0 + (1 - a).sqrt() * noise
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = model(xt, t, y)
        loss = F.mse_loss(pred.float(), noise)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        print(f"step {step} mse {loss.item():.4f}")


if __name__ == "__main__":
    main()
