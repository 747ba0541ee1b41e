"""Decoder-only LM with a 256k multilingual vocabulary.

The full (tokens x vocab) logits would not fit next to everything else, so the loss is computed in chunks
of tokens, each chunk recomputed in backward (torch.utils.checkpoint), as in memory-efficient LM repos.
"""
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

VOCAB_SIZE = 256_000
D_MODEL = 1024
N_LAYER = 12
N_HEAD = D_MODEL // 64
FFN_DIM = int(8 * D_MODEL / 3 // 64 * 64)   # SwiGLU width, rounded to 64
SEQ_LEN = 1024
MAX_SEQ_LEN = 8192                          # rotary table capacity
BATCH_SIZE = 8
LOSS_CHUNK = 1024                           # tokens per loss chunk
STEPS = 6
LR = 3e-4


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + self.eps).to(x.dtype) * self.weight


def rotary_tables(head_dim, max_len, base=10000.0):
    inv = 1.0 / base ** (torch.arange(0, head_dim, 2).float() / head_dim)
    freqs = torch.outer(torch.arange(max_len).float(), inv)
    return freqs.cos(), freqs.sin()


def apply_rotary(x, cos, sin):
    x1, x2 = x[..., ::2], x[..., 1::2]
    out = torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)
    return out.flatten(-2).type_as(x)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm1 = RMSNorm(D_MODEL)
        self.qkv = nn.Linear(D_MODEL, 3 * D_MODEL, bias=False)
        self.proj = nn.Linear(D_MODEL, D_MODEL, bias=False)
        self.norm2 = RMSNorm(D_MODEL)
        self.w12 = nn.Linear(D_MODEL, 2 * FFN_DIM, bias=False)
        self.w3 = nn.Linear(FFN_DIM, D_MODEL, bias=False)

    def forward(self, x, cos, sin):
        B, T, C = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(B, T, 3, N_HEAD, C // N_HEAD).permute(2, 0, 3, 1, 4)
        q, k = apply_rotary(q, cos, sin), apply_rotary(k, cos, sin)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(B, T, C))
        a, b = self.w12(self.norm2(x)).chunk(2, dim=-1)
        return x + self.w3(F.silu(a) * b)


class LM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB_SIZE, D_MODEL)
        self.blocks = nn.ModuleList(Block() for _ in range(N_LAYER))
        self.norm = RMSNorm(D_MODEL)
        self.lm_head = nn.Linear(D_MODEL, VOCAB_SIZE, bias=False)
        self.lm_head.weight = self.embed.weight  # tied
        cos, sin = rotary_tables(D_MODEL // N_HEAD, MAX_SEQ_LEN)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)
        self.apply(self._init)

    @staticmethod
    def _init(m):
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, std=0.02)

    def hidden_states(self, idx):
        T = idx.size(1)
        x = self.embed(idx)
        cos, sin = self.cos[:T], self.sin[:T]
        for blk in self.blocks:
            x = blk(x, cos, sin)
        return self.norm(x)


def _chunk_loss(h, w, targets):
    logits = F.linear(h, w).float()
    return F.cross_entropy(logits, targets, ignore_index=-100, reduction="sum")


def chunked_cross_entropy(h, weight, targets, chunk=LOSS_CHUNK):
    h = h.reshape(-1, h.size(-1))
    targets = targets.reshape(-1)
    total = h.new_zeros((), dtype=torch.float32)
    for hs, ts in zip(h.split(chunk), targets.split(chunk)):
        total = total + checkpoint(_chunk_loss, hs, weight, ts, use_reentrant=False)
    return total / (targets != -100).sum()


def main():
    device = "cuda"
    model = LM().to(device)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"{n_params / 1e6:.1f}M parameters (tied embedding {VOCAB_SIZE * D_MODEL / 1e6:.0f}M)")
    opt = torch.optim.AdamW(model.parameters(), lr=LR, betas=(0.9, 0.95), weight_decay=0.1, fused=True)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 2) * 0.5 * (1 + math.cos(math.pi * s / STEPS)))
    t0 = time.time()
    for step in range(STEPS):
        tokens = torch.randint(0, VOCAB_SIZE, (BATCH_SIZE, SEQ_LEN + 1), device=device)
        inputs, targets = tokens[:, :-1], tokens[:, 1:].clone()
        targets[:, :16] = -100
        with torch.autocast("cuda", dtype=torch.bfloat16):
            h = model.hidden_states(inputs)
            loss = chunked_cross_entropy(h, model.lm_head.weight, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        print(f"step {step} loss {loss.item():.3f} ({time.time() - t0:.1f}s)")
    print(f"peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
