"""Decoder-only LM trained with activation offloading: every tensor saved for backward is parked in
pinned CPU memory (torch.autograd.graph.save_on_cpu) and brought back during backward.

Sizes come from the environment, e.g.  N_LAYER=12 SEQ_LEN=1024 BATCH=16 python train_gpt_save_on_cpu_offload.py
"""
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

N_LAYER = int(os.getenv("N_LAYER", "12"))
N_EMBD = int(os.getenv("N_EMBD", "1024"))
N_HEAD = int(os.getenv("N_HEAD", "16"))
VOCAB = int(os.getenv("VOCAB", "32000"))
SEQ_LEN = int(os.getenv("SEQ_LEN", "1024"))
BATCH = int(os.getenv("BATCH", "16"))
STEPS = int(os.getenv("STEPS", "3"))
LR = float(os.getenv("LR", "3e-4"))
OFFLOAD = os.getenv("OFFLOAD", "1") == "1"


class CausalSelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(N_EMBD, 3 * N_EMBD, bias=False)
        self.proj = nn.Linear(N_EMBD, N_EMBD, bias=False)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(N_EMBD, dim=2)
        q = q.view(B, T, N_HEAD, C // N_HEAD).transpose(1, 2)
        k = k.view(B, T, N_HEAD, C // N_HEAD).transpose(1, 2)
        v = v.view(B, T, N_HEAD, C // N_HEAD).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).contiguous().view(B, T, C))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(N_EMBD)
        self.attn = CausalSelfAttention()
        self.ln2 = nn.LayerNorm(N_EMBD)
        self.mlp = nn.Sequential(nn.Linear(N_EMBD, 4 * N_EMBD, bias=False), nn.GELU(),
                                 nn.Linear(4 * N_EMBD, N_EMBD, bias=False))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, N_EMBD)
        self.wpe = nn.Embedding(SEQ_LEN, N_EMBD)
        self.blocks = nn.ModuleList(Block() for _ in range(N_LAYER))
        self.ln_f = nn.LayerNorm(N_EMBD)
        self.lm_head = nn.Linear(N_EMBD, VOCAB, bias=False)
        self.apply(self._init)

    def _init(self, m):
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, std=0.02)

    def forward(self, idx):
        pos = torch.arange(idx.size(1), device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for b in self.blocks:
            x = b(x)
        return self.lm_head(self.ln_f(x))


def main():
    torch.manual_seed(0)
    model = GPT().cuda()
    print(f"{sum(p.numel() for p in model.parameters()) / 1e6:.1f}M parameters")
    opt = torch.optim.Adam(model.parameters(), lr=LR, betas=(0.9, 0.95), fused=True)

    for step in range(STEPS):
        data = torch.randint(0, VOCAB, (BATCH, SEQ_LEN + 1), device="cuda")
        x, y = data[:, :-1], data[:, 1:]
        if OFFLOAD:
            with torch.autograd.graph.save_on_cpu(pin_memory=True):
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logits = model(x)
                loss = F.cross_entropy(logits.float().view(-1, VOCAB), y.reshape(-1))
        else:
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = model(x)
            loss = F.cross_entropy(logits.float().view(-1, VOCAB), y.reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        print(f"step {step} loss {loss.item():.4f} ppl {math.exp(min(loss.item(), 20)):.1f} "
              f"alloc {torch.cuda.memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
