"""Class-conditional rectified flow (flow matching) on 64x64 images with a small ADM-style U-Net.

x_t = (1 - t) * x_0 + t * eps, the net predicts v = eps - x_0. Labels are dropped to the null class 10% of
the time (classifier-free guidance). EMA weights with torch._foreach_lerp_. After training, an Euler sampler
with guidance draws a batch under torch.no_grad().
"""
import math
from dataclasses import dataclass, field
from typing import List

import torch
import torch.nn as nn
import torch.nn.functional as F
import yaml

CONFIG_YAML = """
model:
  base_ch: 128
  ch_mult: [1, 2, 2, 2]
  num_res_blocks: 2
  attn_res: [16, 8]
  dropout: 0.1
  num_classes: 1000
train:
  img_size: 64
  batch_size: 96
  steps: 6
  lr: 1.0e-4
  ema_decay: 0.9999
  p_uncond: 0.1
sample:
  batch_size: 256
  steps: 32
  guidance: 1.5
"""


@dataclass
class ModelCfg:
    base_ch: int = 64
    ch_mult: List[int] = field(default_factory=lambda: [1, 2, 4])
    num_res_blocks: int = 2
    attn_res: List[int] = field(default_factory=lambda: [16])
    dropout: float = 0.0
    num_classes: int = 10


raw = yaml.safe_load(CONFIG_YAML)
mcfg = ModelCfg(**raw["model"])
tcfg, scfg = raw["train"], raw["sample"]


def timestep_embedding(t, dim, max_period=10000):
    half = dim // 2
    freqs = torch.exp(-math.log(max_period) * torch.arange(half, device=t.device, dtype=torch.float32) / half)
    args = t[:, None].float() * 1000 * freqs[None]
    return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)


class ResBlock(nn.Module):
    def __init__(self, cin, cout, emb_dim, dropout):
        super().__init__()
        self.norm1 = nn.GroupNorm(32, cin)
        self.conv1 = nn.Conv2d(cin, cout, 3, padding=1)
        self.emb = nn.Linear(emb_dim, 2 * cout)
        self.norm2 = nn.GroupNorm(32, cout)
        self.drop = nn.Dropout(dropout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x, emb):
        h = self.conv1(F.silu(self.norm1(x)))
        scale, shift = self.emb(F.silu(emb))[:, :, None, None].chunk(2, dim=1)
        h = self.norm2(h) * (1 + scale) + shift
        h = self.conv2(self.drop(F.silu(h)))
        return self.skip(x) + h


class AttnBlock(nn.Module):
    def __init__(self, ch, head_dim=64):
        super().__init__()
        self.heads = ch // head_dim
        self.norm = nn.GroupNorm(32, ch)
        self.qkv = nn.Conv2d(ch, 3 * ch, 1)
        self.proj = nn.Conv2d(ch, ch, 1)

    def forward(self, x):
        B, C, H, W = x.shape
        q, k, v = self.qkv(self.norm(x)).reshape(B, 3, self.heads, C // self.heads, H * W).transpose(-1, -2).unbind(1)
        h = F.scaled_dot_product_attention(q, k, v)
        return x + self.proj(h.transpose(-1, -2).reshape(B, C, H, W))


class UNet(nn.Module):
    def __init__(self, c: ModelCfg, img_size):
        super().__init__()
        base, emb_dim = c.base_ch, 4 * c.base_ch
        self.base = base
        self.time_mlp = nn.Sequential(nn.Linear(base, emb_dim), nn.SiLU(), nn.Linear(emb_dim, emb_dim))
        self.class_emb = nn.Embedding(c.num_classes + 1, emb_dim)   # last index = "no label"
        self.conv_in = nn.Conv2d(3, base, 3, padding=1)
        self.down = nn.ModuleList()
        chans, ch, res = [base], base, img_size
        for i, m in enumerate(c.ch_mult):
            for _ in range(c.num_res_blocks):
                blocks = nn.ModuleList([ResBlock(ch, base * m, emb_dim, c.dropout)])
                ch = base * m
                if res in c.attn_res:
                    blocks.append(AttnBlock(ch))
                self.down.append(blocks)
                chans.append(ch)
            if i != len(c.ch_mult) - 1:
                self.down.append(nn.ModuleList([nn.Conv2d(ch, ch, 3, stride=2, padding=1)]))
                chans.append(ch)
                res //= 2
        self.mid = nn.ModuleList([ResBlock(ch, ch, emb_dim, c.dropout), AttnBlock(ch),
                                  ResBlock(ch, ch, emb_dim, c.dropout)])
        self.up = nn.ModuleList()
        for i, m in reversed(list(enumerate(c.ch_mult))):
            for j in range(c.num_res_blocks + 1):
                blocks = nn.ModuleList([ResBlock(ch + chans.pop(), base * m, emb_dim, c.dropout)])
                ch = base * m
                if res in c.attn_res:
                    blocks.append(AttnBlock(ch))
                if i != 0 and j == c.num_res_blocks:
                    blocks.append(nn.Upsample(scale_factor=2, mode="nearest"))
                    blocks.append(nn.Conv2d(ch, ch, 3, padding=1))
                    res *= 2
                self.up.append(blocks)
        self.out = nn.Sequential(nn.GroupNorm(32, ch), nn.SiLU(), nn.Conv2d(ch, 3, 3, padding=1))

    @staticmethod
    def _run(blocks, h, emb):
        for layer in blocks:
            h = layer(h, emb) if isinstance(layer, ResBlock) else layer(h)
        return h

    def forward(self, x, t, y):
        emb = self.time_mlp(timestep_embedding(t, self.base)) + self.class_emb(y)
        h = self.conv_in(x)
        hs = [h]
        for blocks in self.down:
            h = self._run(blocks, h, emb)
            hs.append(h)
        h = self._run(self.mid, h, emb)
        for blocks in self.up:
            h = self._run(blocks, torch.cat([h, hs.pop()], dim=1), emb)
        return self.out(h)


@torch.no_grad()
def sample(model, n, steps, guidance, num_classes, img_size):
    x = torch.randn(n, 3, img_size, img_size, device="cuda")
    y = torch.randint(0, num_classes, (n,), device="cuda")
    null = torch.full_like(y, num_classes)
    ts = torch.linspace(1.0, 0.0, steps + 1, device="cuda")
    for i in range(steps):
        t = ts[i].expand(n)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            v = model(torch.cat([x, x]), torch.cat([t, t]), torch.cat([y, null])).float()
        v_c, v_u = v.chunk(2)
        v = v_u + guidance * (v_c - v_u)
        x = x + (ts[i + 1] - ts[i]) * v
    return x.clamp(-1, 1)


def main():
    torch.manual_seed(0)
    img = tcfg["img_size"]
    model = UNet(mcfg, img).cuda()
    ema = UNet(mcfg, img).cuda().eval().requires_grad_(False)
    ema.load_state_dict(model.state_dict())
    print(f"U-Net params: {sum(p.numel() for p in model.parameters()) / 1e6:.1f}M")
    opt = torch.optim.AdamW(model.parameters(), lr=tcfg["lr"], weight_decay=0.0)

    for step in range(tcfg["steps"]):
        x0 = torch.randn(tcfg["batch_size"], 3, img, img, device="cuda").clamp(-1, 1)
        y = torch.randint(0, mcfg.num_classes, (tcfg["batch_size"],), device="cuda")
        drop = torch.rand(y.shape, device="cuda") < tcfg["p_uncond"]
        y = torch.where(drop, torch.full_like(y, mcfg.num_classes), y)
        t = torch.rand(x0.shape[0], device="cuda")
        eps = torch.randn_like(x0)
        xt = (1 - t[:, None, None, None]) * x0 + t[:, None, None, None] * eps
        with torch.autocast("cuda", dtype=torch.bfloat16):
            v = model(xt, t, y)
        loss = F.mse_loss(v.float(), eps - x0)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        with torch.no_grad():
            torch._foreach_lerp_(list(ema.parameters()), list(model.parameters()), 1 - tcfg["ema_decay"])
        print(f"step {step} loss {loss.item():.4f}")

    imgs = sample(ema, scfg["batch_size"], scfg["steps"], scfg["guidance"], mcfg.num_classes, img)
    print("samples", tuple(imgs.shape), f"mean {imgs.mean().item():.3f}")
    print("peak GiB", torch.cuda.max_memory_allocated() / 2**30)


if __name__ == "__main__":
    main()
