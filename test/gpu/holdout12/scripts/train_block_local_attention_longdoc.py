"""Long-document classifier with block-local (sliding-window) attention, written by hand.

Each block of `window` tokens attends to itself and its two neighbour blocks (keys/values of the previous and
next block are concatenated), plus a handful of global tokens. Config is a class with derived sizes as
properties; norm and activation come from functools.partial / getattr(nn, ...).
"""
import functools
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Config:
    vocab_size = 50265
    max_len = 8192
    window = 256
    n_global = 1
    d_model = 512
    n_heads = 8
    n_layers = 8
    mlp_ratio = 4
    activation = "GELU"
    dropout = 0.1
    num_labels = 20
    batch_size = 4
    seq_len = 4096
    lr = 3e-4
    steps = 6

    @property
    def head_dim(self):
        return self.d_model // self.n_heads

    @property
    def d_ff(self):
        return self.d_model * self.mlp_ratio

    @property
    def n_blocks(self):
        return self.seq_len // self.window


cfg = Config()
Norm = functools.partial(nn.LayerNorm, eps=1e-6)
Act = getattr(nn, cfg.activation)


class BlockLocalAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.qkv = nn.Linear(c.d_model, 3 * c.d_model)
        self.proj = nn.Linear(c.d_model, c.d_model)
        self.drop = nn.Dropout(c.dropout)

    def forward(self, x):
        B, L, D = x.shape
        H, hd, w = self.c.n_heads, self.c.head_dim, self.c.window
        nb = L // w
        q, k, v = self.qkv(x).view(B, L, 3, H, hd).permute(2, 0, 3, 1, 4)   # each (B, H, L, hd)
        q = q.reshape(B, H, nb, w, hd)
        k = k.reshape(B, H, nb, w, hd)
        v = v.reshape(B, H, nb, w, hd)
        zeros = torch.zeros_like(k[:, :, :1])
        k_prev = torch.cat([zeros, k[:, :, :-1]], 2)
        k_next = torch.cat([k[:, :, 1:], zeros], 2)
        v_prev = torch.cat([zeros, v[:, :, :-1]], 2)
        v_next = torch.cat([v[:, :, 1:], zeros], 2)
        kk = torch.cat([k_prev, k, k_next], 3)             # (B, H, nb, 3w, hd)
        vv = torch.cat([v_prev, v, v_next], 3)
        scores = torch.einsum("bhnqd,bhnkd->bhnqk", q, kk) / math.sqrt(hd)
        # padding blocks at both ends are masked out
        mask = torch.zeros(nb, 1, 3 * w, dtype=torch.bool, device=x.device)
        mask[0, :, :w] = True
        mask[-1, :, 2 * w:] = True
        scores = scores.masked_fill(mask, float("-inf"))
        attn = self.drop(scores.softmax(-1))
        out = torch.einsum("bhnqk,bhnkd->bhnqd", attn, vv).reshape(B, H, L, hd)
        out = out.transpose(1, 2).reshape(B, L, D)
        # global token(s): full attention from the first n_global positions
        g = self.c.n_global
        qg = q.reshape(B, H, L, hd)[:, :, :g]
        gout = F.scaled_dot_product_attention(qg, k.reshape(B, H, L, hd), v.reshape(B, H, L, hd))
        out = torch.cat([gout.transpose(1, 2).reshape(B, g, D), out[:, g:]], 1)
        return self.proj(out)


class Layer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.n1, self.n2 = Norm(c.d_model), Norm(c.d_model)
        self.attn = BlockLocalAttention(c)
        self.ff = nn.Sequential(nn.Linear(c.d_model, c.d_ff), Act(), nn.Dropout(c.dropout),
                                nn.Linear(c.d_ff, c.d_model))

    def forward(self, x):
        x = x + self.attn(self.n1(x))
        return x + self.ff(self.n2(x))


class LongDocClassifier(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.tok = nn.Embedding(c.vocab_size, c.d_model)
        self.pos = nn.Embedding(c.max_len, c.d_model)
        self.layers = nn.ModuleList([Layer(c) for _ in range(c.n_layers)])
        self.norm = Norm(c.d_model)
        self.cls = nn.Linear(c.d_model, c.num_labels)

    def forward(self, ids):
        pos = torch.arange(ids.size(1), device=ids.device)
        x = self.tok(ids) + self.pos(pos)
        for layer in self.layers:
            x = layer(x)
        return self.cls(self.norm(x)[:, 0])


def main():
    assert cfg.seq_len % cfg.window == 0, cfg.n_blocks
    device = "cuda"
    model = LongDocClassifier(cfg).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, betas=(0.9, 0.98), weight_decay=0.01)
    for step in range(cfg.steps):
        ids = torch.randint(0, cfg.vocab_size, (cfg.batch_size, cfg.seq_len), device=device)
        labels = torch.randint(0, cfg.num_labels, (cfg.batch_size,), device=device)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(ids)
        loss = F.cross_entropy(logits.float(), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"step {step}: loss {loss.item():.3f}")
    print("peak: %.2f GiB" % (torch.cuda.max_memory_allocated() / 2 ** 30))


if __name__ == "__main__":
    main()
