"""Batched sampling from a Llama-style decoder (written from scratch) with a pre-allocated, static KV cache.

The cache is allocated once for MAX_CACHE_LEN = 2048 positions (the model's context), although this run only
uses PROMPT_LEN + NEW_TOKENS = 512 + 256 positions. bf16 weights, torch.inference_mode().
"""
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

DIM = 2048
N_LAYERS = 22
N_HEADS = 32
N_KV_HEADS = 4
FFN_DIM = 5632
VOCAB = 32000
MAX_CACHE_LEN = 2048
BATCH = 64
PROMPT_LEN = 512
NEW_TOKENS = 256
TEMPERATURE = 0.8
HEAD_DIM = DIM // N_HEADS


class RMSNorm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-5)).type_as(x) * self.weight


def rope(x, pos, theta=10000.0):
    # x: (B, H, T, D); pos: (T,)
    d = x.shape[-1]
    inv = 1.0 / theta ** (torch.arange(0, d, 2, device=x.device).float() / d)
    ang = pos.float()[:, None] * inv[None]
    cos, sin = ang.cos().to(x.dtype), ang.sin().to(x.dtype)
    x1, x2 = x[..., : d // 2], x[..., d // 2:]
    return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)


class KVCache(nn.Module):
    def __init__(self, batch, max_len, n_kv, head_dim, dtype):
        super().__init__()
        shape = (batch, n_kv, max_len, head_dim)
        self.register_buffer("k", torch.zeros(shape, dtype=dtype), persistent=False)
        self.register_buffer("v", torch.zeros(shape, dtype=dtype), persistent=False)

    def update(self, start, k, v):
        t = k.shape[2]
        self.k[:, :, start:start + t] = k
        self.v[:, :, start:start + t] = v
        return self.k[:, :, : start + t], self.v[:, :, : start + t]


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.wq = nn.Linear(DIM, N_HEADS * HEAD_DIM, bias=False)
        self.wk = nn.Linear(DIM, N_KV_HEADS * HEAD_DIM, bias=False)
        self.wv = nn.Linear(DIM, N_KV_HEADS * HEAD_DIM, bias=False)
        self.wo = nn.Linear(DIM, DIM, bias=False)
        self.cache = None

    def forward(self, x, start):
        B, T, _ = x.shape
        q = self.wq(x).view(B, T, N_HEADS, HEAD_DIM).transpose(1, 2)
        k = self.wk(x).view(B, T, N_KV_HEADS, HEAD_DIM).transpose(1, 2)
        v = self.wv(x).view(B, T, N_KV_HEADS, HEAD_DIM).transpose(1, 2)
        pos = torch.arange(start, start + T, device=x.device)
        q, k = rope(q, pos), rope(k, pos)
        k, v = self.cache.update(start, k, v)
        rep = N_HEADS // N_KV_HEADS
        k = k.repeat_interleave(rep, dim=1)
        v = v.repeat_interleave(rep, dim=1)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=(T > 1))
        return self.wo(y.transpose(1, 2).reshape(B, T, DIM))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn_norm = RMSNorm(DIM)
        self.attn = Attention()
        self.ffn_norm = RMSNorm(DIM)
        self.w1 = nn.Linear(DIM, FFN_DIM, bias=False)
        self.w2 = nn.Linear(FFN_DIM, DIM, bias=False)
        self.w3 = nn.Linear(DIM, FFN_DIM, bias=False)

    def forward(self, x, start):
        x = x + self.attn(self.attn_norm(x), start)
        h = self.ffn_norm(x)
        return x + self.w2(F.silu(self.w1(h)) * self.w3(h))


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.layers = nn.ModuleList(Block() for _ in range(N_LAYERS))
        self.norm = RMSNorm(DIM)
        self.output = nn.Linear(DIM, VOCAB, bias=False)

    def setup_caches(self, batch, max_len, dtype, device):
        for layer in self.layers:
            layer.attn.cache = KVCache(batch, max_len, N_KV_HEADS, HEAD_DIM, dtype).to(device)

    def forward(self, tokens, start):
        h = self.embed(tokens)
        for layer in self.layers:
            h = layer(h, start)
        return self.output(self.norm(h[:, -1:]))   # only the last position is needed for sampling


@torch.inference_mode()
def generate(model, prompt, new_tokens):
    logits = model(prompt, 0)
    out = [prompt]
    pos = prompt.shape[1]
    for _ in range(new_tokens):
        probs = torch.softmax(logits[:, -1].float() / TEMPERATURE, dim=-1)
        nxt = torch.multinomial(probs, 1)
        out.append(nxt)
        logits = model(nxt, pos)
        pos += 1
    return torch.cat(out, dim=1)


if __name__ == "__main__":
    torch.manual_seed(0)
    device = torch.device("cuda")
    with torch.device("meta"):
        model = Decoder()
    model = model.to_empty(device=device).to(torch.bfloat16)
    for name, p in model.named_parameters():
        if p.dim() > 1:
            nn.init.normal_(p, std=0.02)
        else:
            nn.init.ones_(p)
    model.eval()
    model.setup_caches(BATCH, MAX_CACHE_LEN, torch.bfloat16, device)
    print(f"{sum(p.numel() for p in model.parameters()) / 1e9:.2f}B params")
    prompt = torch.randint(0, VOCAB, (BATCH, PROMPT_LEN), device=device)
    t0 = time.time()
    seq = generate(model, prompt, NEW_TOKENS)
    torch.cuda.synchronize()
    dt = time.time() - t0
    print(seq.shape, f"{BATCH * NEW_TOKENS / dt:.0f} tok/s")
