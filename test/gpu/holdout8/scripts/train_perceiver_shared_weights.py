"""Perceiver (Jaegle et al. 2021) image classifier on 64x64 ImageNet-style images, written from the paper.

The 4096 pixels (RGB + Fourier position features) are the byte array; 256 latents of width 512 cross-attend
to it, then run a 6-block latent transformer. That pair is applied `num_iterations=4` times; as in the paper,
the first cross-attention has its own weights and the later ones (and the latent transformer) are shared, so the
same modules run several times per forward. fp32 with TF32 matmuls; AdamW (the paper used LAMB).
"""
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True

TRAIN = dict(batch_size=32, image_size=64, num_classes=1000, steps=5, lr=4e-4, weight_decay=0.1)


def fourier_encode(pos, num_bands, max_freq):
    """pos: (..., d) in [-1, 1] -> (..., d * (2 * num_bands + 1))."""
    freqs = torch.linspace(1.0, max_freq / 2, num_bands, device=pos.device)
    x = pos[..., None] * freqs * math.pi
    enc = torch.cat([x.sin(), x.cos(), pos[..., None]], dim=-1)
    return enc.flatten(-2)


class PreNorm(nn.Module):
    def __init__(self, dim, fn, context_dim=None):
        super().__init__()
        self.fn = fn
        self.norm = nn.LayerNorm(dim)
        self.norm_context = nn.LayerNorm(context_dim) if context_dim is not None else None

    def forward(self, x, **kwargs):
        x = self.norm(x)
        if self.norm_context is not None:
            kwargs["context"] = self.norm_context(kwargs["context"])
        return self.fn(x, **kwargs)


class FeedForward(nn.Module):
    def __init__(self, dim, mult=4, dropout=0.0):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, dim * mult), nn.GELU(), nn.Dropout(dropout),
                                 nn.Linear(dim * mult, dim))

    def forward(self, x):
        return self.net(x)


class Attention(nn.Module):
    def __init__(self, query_dim, context_dim=None, heads=8, dim_head=64, dropout=0.0):
        super().__init__()
        inner = heads * dim_head
        context_dim = context_dim or query_dim
        self.scale = dim_head ** -0.5
        self.heads = heads
        self.to_q = nn.Linear(query_dim, inner, bias=False)
        self.to_kv = nn.Linear(context_dim, inner * 2, bias=False)
        self.to_out = nn.Linear(inner, query_dim)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, context=None):
        h = self.heads
        context = x if context is None else context
        q = self.to_q(x)
        k, v = self.to_kv(context).chunk(2, dim=-1)
        q, k, v = (t.reshape(t.shape[0], t.shape[1], h, -1).transpose(1, 2) for t in (q, k, v))
        sim = torch.einsum("bhid,bhjd->bhij", q, k) * self.scale
        attn = self.dropout(sim.softmax(dim=-1))
        out = torch.einsum("bhij,bhjd->bhid", attn, v)
        out = out.transpose(1, 2).reshape(x.shape[0], x.shape[1], -1)
        return self.to_out(out)


def cross_block(latent_dim, input_dim, cross_heads, cross_dim_head):
    return nn.ModuleList([
        PreNorm(latent_dim, Attention(latent_dim, input_dim, heads=cross_heads, dim_head=cross_dim_head),
                context_dim=input_dim),
        PreNorm(latent_dim, FeedForward(latent_dim)),
    ])


def latent_transformer(latent_dim, depth, heads, dim_head):
    return nn.ModuleList([
        nn.ModuleList([PreNorm(latent_dim, Attention(latent_dim, heads=heads, dim_head=dim_head)),
                       PreNorm(latent_dim, FeedForward(latent_dim))])
        for _ in range(depth)
    ])


class Perceiver(nn.Module):
    def __init__(self, *, input_channels=3, num_freq_bands=32, max_freq=32.0, num_iterations=4, num_latents=256,
                 latent_dim=512, cross_heads=1, cross_dim_head=64, latent_heads=8, latent_dim_head=64,
                 self_per_cross_attn=6, num_classes=1000):
        super().__init__()
        self.num_freq_bands, self.max_freq = num_freq_bands, max_freq
        self.num_iterations = num_iterations
        input_dim = input_channels + 2 * (2 * num_freq_bands + 1)
        self.latents = nn.Parameter(torch.randn(num_latents, latent_dim) * 0.02)
        self.first_cross = cross_block(latent_dim, input_dim, cross_heads, cross_dim_head)
        self.shared_cross = cross_block(latent_dim, input_dim, cross_heads, cross_dim_head)
        self.shared_latent = latent_transformer(latent_dim, self_per_cross_attn, latent_heads, latent_dim_head)
        self.to_logits = nn.Sequential(nn.LayerNorm(latent_dim), nn.Linear(latent_dim, num_classes))

    def forward(self, img):
        b, c, H, W = img.shape
        axis = [torch.linspace(-1.0, 1.0, steps=s, device=img.device) for s in (H, W)]
        pos = torch.stack(torch.meshgrid(*axis, indexing="ij"), dim=-1)          # (H, W, 2)
        enc = fourier_encode(pos, self.num_freq_bands, self.max_freq)             # (H, W, 2*(2F+1))
        data = torch.cat([img.permute(0, 2, 3, 1), enc.expand(b, -1, -1, -1)], dim=-1)
        data = data.reshape(b, H * W, -1)

        x = self.latents.expand(b, -1, -1)
        for i in range(self.num_iterations):
            cross_attn, cross_ff = self.first_cross if i == 0 else self.shared_cross
            x = cross_attn(x, context=data) + x
            x = cross_ff(x) + x
            for self_attn, self_ff in self.shared_latent:
                x = self_attn(x) + x
                x = self_ff(x) + x
        return self.to_logits(x.mean(dim=1))


class ImageNet64Stub(Dataset):
    def __init__(self, n, size, num_classes):
        self.n, self.size, self.num_classes = n, size, num_classes

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.rand(3, self.size, self.size) * 2 - 1, torch.randint(self.num_classes, ()).item()


def build_and_train(num_iterations=4, num_latents=256, latent_dim=512, depth=6, train=TRAIN):
    device = torch.device("cuda")
    model = Perceiver(num_iterations=num_iterations, num_latents=num_latents, latent_dim=latent_dim,
                      self_per_cross_attn=depth, num_classes=train["num_classes"]).to(device)
    print(f"params {sum(p.numel() for p in model.parameters()) / 1e6:.1f}M; "
          f"byte array {train['image_size'] ** 2} x {3 + 2 * 65}")
    loader = DataLoader(ImageNet64Stub(train["batch_size"] * train["steps"], train["image_size"],
                                       train["num_classes"]),
                        batch_size=train["batch_size"], shuffle=True, num_workers=2)
    optimizer = torch.optim.AdamW(model.parameters(), lr=train["lr"], weight_decay=train["weight_decay"])

    model.train()
    t0 = time.time()
    for step, (img, y) in enumerate(loader):
        img, y = img.to(device), y.to(device)
        loss = F.cross_entropy(model(img), y)
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 10.0)
        optimizer.step()
        print(f"step {step} loss {loss.item():.3f} ({time.time() - t0:.1f}s)")
    print(f"peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    build_and_train()
