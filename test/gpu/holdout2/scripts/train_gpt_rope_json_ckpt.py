"""Small Llama-like decoder (RoPE, RMSNorm, SwiGLU) trained from scratch; config in configs/gpt_rope.json."""
import json
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint
from torch.utils.data import DataLoader, Dataset

with open("configs/gpt_rope.json") as f:
    CFG = json.load(f)
M, D, O, T = CFG["model"], CFG["data"], CFG["optim"], CFG["train"]


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        var = x.float().pow(2).mean(-1, keepdim=True)
        return (x.float() * torch.rsqrt(var + self.eps)).type_as(x) * self.weight


def rope_cache(max_len, head_dim, base):
    inv = 1.0 / (base ** (torch.arange(0, head_dim, 2).float() / head_dim))
    freqs = torch.outer(torch.arange(max_len).float(), inv)
    return torch.cos(freqs), torch.sin(freqs)


def apply_rope(x, cos, sin):
    # x: (B, H, L, hd)
    x1, x2 = x[..., ::2], x[..., 1::2]
    L = x.size(-2)
    cos, sin = cos[:L], sin[:L]
    out = torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)
    return out.flatten(-2).type_as(x)


class Attention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads, self.head_dim = n_heads, d_model // n_heads
        self.wqkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.wo = nn.Linear(d_model, d_model, bias=False)

    def forward(self, x, cos, sin):
        B, L, C = x.shape
        q, k, v = self.wqkv(x).split(C, dim=-1)
        q, k, v = (t.view(B, L, self.n_heads, self.head_dim).transpose(1, 2) for t in (q, k, v))
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.wo(y.transpose(1, 2).reshape(B, L, C))


class SwiGLU(nn.Module):
    def __init__(self, d_model, hidden):
        super().__init__()
        self.w1 = nn.Linear(d_model, hidden, bias=False)
        self.w3 = nn.Linear(d_model, hidden, bias=False)
        self.w2 = nn.Linear(hidden, d_model, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self, d_model, n_heads, ffn_hidden):
        super().__init__()
        self.attn_norm = RMSNorm(d_model)
        self.attn = Attention(d_model, n_heads)
        self.ffn_norm = RMSNorm(d_model)
        self.ffn = SwiGLU(d_model, ffn_hidden)

    def forward(self, x, cos, sin):
        x = x + self.attn(self.attn_norm(x), cos, sin)
        return x + self.ffn(self.ffn_norm(x))


class Transformer(nn.Module):
    def __init__(self, m, grad_checkpoint=False):
        super().__init__()
        self.grad_checkpoint = grad_checkpoint
        self.tok_emb = nn.Embedding(m["vocab_size"], m["d_model"])
        self.layers = nn.ModuleList([Block(m["d_model"], m["n_heads"], m["ffn_hidden"])
                                     for _ in range(m["n_layers"])])
        self.norm = RMSNorm(m["d_model"])
        self.lm_head = nn.Linear(m["d_model"], m["vocab_size"], bias=False)
        if m["tie_embeddings"]:
            self.lm_head.weight = self.tok_emb.weight
        cos, sin = rope_cache(m["max_seq_len"], m["d_model"] // m["n_heads"], m["rope_base"])
        self.register_buffer("rope_cos", cos, persistent=False)
        self.register_buffer("rope_sin", sin, persistent=False)
        self.apply(self._init)

    @staticmethod
    def _init(mod):
        if isinstance(mod, (nn.Linear, nn.Embedding)):
            nn.init.normal_(mod.weight, std=0.02)

    def forward(self, idx, targets=None):
        x = self.tok_emb(idx)
        for layer in self.layers:
            if self.grad_checkpoint and self.training:
                x = checkpoint(layer, x, self.rope_cos, self.rope_sin, use_reentrant=False)
            else:
                x = layer(x, self.rope_cos, self.rope_sin)
        logits = self.lm_head(self.norm(x))
        if targets is None:
            return logits
        loss = F.cross_entropy(logits.float().view(-1, logits.size(-1)), targets.view(-1), ignore_index=-100)
        return logits, loss


class TokenBlocks(Dataset):
    def __init__(self, n, seq_len, vocab):
        self.data = torch.randint(0, vocab, (n, seq_len + 1))

    def __len__(self):
        return len(self.data)

    def __getitem__(self, i):
        return self.data[i, :-1], self.data[i, 1:]


def configure_optimizer(model):
    params = {n: p for n, p in model.named_parameters() if p.requires_grad}
    decay = [p for p in params.values() if p.dim() >= 2]
    nodecay = [p for p in params.values() if p.dim() < 2]
    return torch.optim.AdamW([{"params": decay, "weight_decay": O["weight_decay"]},
                              {"params": nodecay, "weight_decay": 0.0}],
                             lr=O["lr"], betas=tuple(O["betas"]), fused=O["fused"])


def main():
    torch.manual_seed(0)
    model = Transformer(M, grad_checkpoint=T["grad_checkpoint"]).cuda()
    print(f"{sum(p.numel() for p in model.parameters()) / 1e6:.1f}M params")
    optimizer = configure_optimizer(model)
    amp_dtype = getattr(torch, T["amp_dtype"])

    loader = DataLoader(TokenBlocks(D["micro_batch_size"] * T["max_steps"], D["seq_len"], M["vocab_size"]),
                        batch_size=D["micro_batch_size"], shuffle=True, drop_last=True)

    model.train()
    t0 = time.time()
    for step, (x, y) in enumerate(loader):
        lr = O["lr"] * min(1.0, (step + 1) / 2)
        for g in optimizer.param_groups:
            g["lr"] = lr
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        with torch.autocast("cuda", dtype=amp_dtype):
            _, loss = model(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), T["grad_clip"])
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        tok_s = (step + 1) * x.numel() / (time.time() - t0)
        print(f"step {step} loss {loss.item():.3f} ppl {math.exp(loss.item()):.0f} tok/s {tok_s:,.0f}")


if __name__ == "__main__":
    main()
