"""Symbolic-music language model (REMI-style event tokens) built from nn.MultiheadAttention blocks.

Each block is run under torch.utils.checkpoint to fit 2048-event sequences; bf16 autocast.
"""
import functools
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint
from torch.utils.data import DataLoader, TensorDataset

EVENT_VOCAB = 512
SEQ_LEN = 2048
BATCH_SIZE = 16
STEPS = 5


class Block(nn.Module):
    def __init__(self, d_model, n_heads, dropout=0.1):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = nn.MultiheadAttention(d_model, n_heads, dropout=dropout, batch_first=True)
        self.ln2 = nn.LayerNorm(d_model)
        self.ff = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model),
                                nn.Dropout(dropout))

    def forward(self, x, mask):
        h = self.ln1(x)
        a, _ = self.attn(h, h, h, attn_mask=mask)
        x = x + a
        return x + self.ff(self.ln2(x))


class MusicTransformer(nn.Module):
    def __init__(self, vocab, d_model, n_layers, n_heads, max_len=8192, use_checkpoint=False):
        super().__init__()
        self.tok = nn.Embedding(vocab, d_model)
        self.pos = nn.Embedding(max_len, d_model)
        self.blocks = nn.ModuleList([Block(d_model, n_heads) for _ in range(n_layers)])
        self.ln_f = nn.LayerNorm(d_model)
        self.out = nn.Linear(d_model, vocab, bias=False)
        self.use_checkpoint = use_checkpoint

    def forward(self, idx):
        B, T = idx.shape
        pos = torch.arange(T, device=idx.device)
        x = self.tok(idx) + self.pos(pos)[None]
        mask = torch.triu(torch.ones(T, T, dtype=torch.bool, device=idx.device), diagonal=1)
        for blk in self.blocks:
            if self.use_checkpoint and self.training:
                x = checkpoint(blk, x, mask, use_reentrant=False)
            else:
                x = blk(x, mask)
        return self.out(self.ln_f(x))


music_base = functools.partial(MusicTransformer, EVENT_VOCAB, d_model=768, n_layers=12, n_heads=12)

if __name__ == "__main__":
    torch.manual_seed(0)
    model = music_base(use_checkpoint=True).cuda()
    print(f"{sum(p.numel() for p in model.parameters()) / 1e6:.1f}M parameters")

    data = torch.randint(0, EVENT_VOCAB, (BATCH_SIZE * STEPS, SEQ_LEN + 1))
    loader = DataLoader(TensorDataset(data), batch_size=BATCH_SIZE, shuffle=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / 2))

    model.train()
    for step, (seq,) in enumerate(loader):
        seq = seq.cuda(non_blocking=True)
        inp, tgt = seq[:, :-1], seq[:, 1:]
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(inp)
            loss = F.cross_entropy(logits.reshape(-1, EVENT_VOCAB), tgt.reshape(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        sched.step()
        print(f"step {step} loss {loss.item():.3f} ppl {math.exp(min(loss.item(), 20)):.1f}")
    print("max allocated GiB", torch.cuda.max_memory_allocated() / 2**30)
