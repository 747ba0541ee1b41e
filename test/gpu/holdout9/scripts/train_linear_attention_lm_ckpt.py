"""Causal linear-attention LM ("Transformers are RNNs", elu+1 feature map) with the prefix sums written out
with cumsum. The per-position key-value outer products are big, so every block runs under
torch.utils.checkpoint. bf16 autocast, fused AdamW. Nested dict config; the model section is unpacked into
the constructor.
"""
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

cfg = {
    "model": {"vocab_size": 50304, "dim": 768, "depth": 8, "heads": 12, "ff_mult": 4, "max_seq_len": 2048,
              "grad_ckpt": True},
    "data": {"batch_size": 8, "seq_len": 1024},
    "optim": {"lr": 3e-4, "betas": (0.9, 0.95), "weight_decay": 0.1, "warmup": 2},
    "train": {"steps": 8, "amp_dtype": "bfloat16", "log_every": 1},
}


def feature_map(x):
    return F.elu(x) + 1.0


def causal_linear_attention(q, k, v, eps=1e-6):
    # q, k, v: (B, H, L, D)
    q, k = feature_map(q), feature_map(k)
    kv = torch.einsum("bhld,bhle->bhlde", k, v).cumsum(dim=2)      # (B, H, L, D, D) running sums
    k_sum = k.cumsum(dim=2)                                          # (B, H, L, D)
    num = torch.einsum("bhld,bhlde->bhle", q, kv)
    den = torch.einsum("bhld,bhld->bhl", q, k_sum).unsqueeze(-1) + eps
    return num / den


class LinearAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.to_qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.to_out = nn.Linear(dim, dim, bias=False)

    def forward(self, x):
        B, L, C = x.shape
        q, k, v = self.to_qkv(x).view(B, L, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        out = causal_linear_attention(q, k, v)
        return self.to_out(out.transpose(1, 2).reshape(B, L, C))


class Block(nn.Module):
    def __init__(self, dim, heads, ff_mult):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = LinearAttention(dim, heads)
        self.norm2 = nn.LayerNorm(dim)
        self.ff = nn.Sequential(nn.Linear(dim, ff_mult * dim), nn.GELU(), nn.Linear(ff_mult * dim, dim))

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.ff(self.norm2(x))


class LinearTransformerLM(nn.Module):
    def __init__(self, vocab_size, dim, depth, heads, ff_mult=4, max_seq_len=2048, grad_ckpt=False):
        super().__init__()
        self.grad_ckpt = grad_ckpt
        self.tok_emb = nn.Embedding(vocab_size, dim)
        self.pos_emb = nn.Embedding(max_seq_len, dim)
        self.blocks = nn.ModuleList([Block(dim, heads, ff_mult) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab_size, bias=False)
        self.head.weight = self.tok_emb.weight
        self.apply(self._init)

    @staticmethod
    def _init(m):
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, std=0.02)

    def forward(self, ids):
        pos = torch.arange(ids.size(1), device=ids.device)
        x = self.tok_emb(ids) + self.pos_emb(pos)
        for blk in self.blocks:
            if self.grad_ckpt and self.training:
                x = checkpoint(blk, x, use_reentrant=False)
            else:
                x = blk(x)
        return self.head(self.norm(x))


def main():
    device = "cuda"
    model = LinearTransformerLM(**cfg["model"]).to(device)
    print(f"{sum(p.numel() for p in model.parameters()) / 1e6:.1f}M params")
    o = cfg["optim"]
    opt = torch.optim.AdamW(model.parameters(), lr=o["lr"], betas=o["betas"], weight_decay=o["weight_decay"],
                            fused=True)
    steps = cfg["train"]["steps"]
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / o["warmup"]) * 0.5 * (1 + math.cos(math.pi * s / steps)))
    amp_dtype = getattr(torch, cfg["train"]["amp_dtype"])
    B, L = cfg["data"]["batch_size"], cfg["data"]["seq_len"]

    t0 = time.time()
    model.train()
    for step in range(steps):
        batch = torch.randint(0, cfg["model"]["vocab_size"], (B, L + 1), device=device)
        x, y = batch[:, :-1], batch[:, 1:]
        with torch.autocast("cuda", dtype=amp_dtype):
            logits = model(x)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), y.reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        if step % cfg["train"]["log_every"] == 0:
            print(f"step {step} loss {loss.item():.3f} ({time.time() - t0:.1f}s)")
    print(f"peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
