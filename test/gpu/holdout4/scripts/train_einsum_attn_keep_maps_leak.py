"""Document classifier with a hand-written transformer (einsum attention that also returns the attention map).

DELIBERATE LEAK, kept on purpose as a test case: to "visualise attention later", every training step appends the
last layer's attention probabilities to `attention_maps` without .detach().cpu(). Each map is
batch x heads x seq x seq (softmax runs in fp32 under autocast: 32 x 8 x 512 x 512 x 4 B = 256 MiB) and stays
on the GPU, so memory grows by that much per step for the fixed TrainConfig.steps = 10 steps.
"""
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


@dataclass
class TrainConfig:
    vocab_size: int = 30000
    max_len: int = 2048          # capacity of the learned position table
    seq_len: int = 512           # what the data actually has
    d_model: int = 512
    n_heads: int = 8
    n_layers: int = 8
    d_ff: int = 2048
    num_labels: int = 20
    batch_size: int = 32
    lr: float = 3e-4
    steps: int = 10


class EinsumSelfAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.h = n_heads
        self.dk = d_model // n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x, pad_mask):
        B, S, _ = x.shape
        q, k, v = self.qkv(x).view(B, S, 3, self.h, self.dk).unbind(dim=2)
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / self.dk ** 0.5
        scores = scores.masked_fill(pad_mask[:, None, None, :], float("-inf"))
        attn = scores.softmax(dim=-1)
        out = torch.einsum("bhqk,bkhd->bqhd", attn, v).reshape(B, S, -1)
        return self.proj(out), attn


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.ln1 = nn.LayerNorm(cfg.d_model)
        self.attn = EinsumSelfAttention(cfg.d_model, cfg.n_heads)
        self.ln2 = nn.LayerNorm(cfg.d_model)
        self.ff = nn.Sequential(nn.Linear(cfg.d_model, cfg.d_ff), nn.GELU(), nn.Linear(cfg.d_ff, cfg.d_model))

    def forward(self, x, pad_mask):
        a, attn = self.attn(self.ln1(x), pad_mask)
        x = x + a
        return x + self.ff(self.ln2(x)), attn


class DocClassifier(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.tok = nn.Embedding(cfg.vocab_size, cfg.d_model, padding_idx=0)
        self.pos = nn.Embedding(cfg.max_len, cfg.d_model)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layers))
        self.norm = nn.LayerNorm(cfg.d_model)
        self.cls = nn.Linear(cfg.d_model, cfg.num_labels)

    def forward(self, ids):
        pad_mask = ids.eq(0)
        x = self.tok(ids) + self.pos(torch.arange(ids.size(1), device=ids.device))
        for blk in self.blocks:
            x, attn = blk(x, pad_mask)
        x = self.norm(x)
        keep = (~pad_mask).unsqueeze(-1).to(x.dtype)
        pooled = (x * keep).sum(1) / keep.sum(1).clamp(min=1)
        return self.cls(pooled), attn


class Docs(Dataset):
    def __init__(self, cfg, n):
        self.ids = torch.randint(1, cfg.vocab_size, (n, cfg.seq_len))
        lens = torch.randint(cfg.seq_len // 2, cfg.seq_len + 1, (n,))
        self.ids[torch.arange(cfg.seq_len)[None] >= lens[:, None]] = 0
        self.y = torch.randint(0, cfg.num_labels, (n,))

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.ids[i], self.y[i]


cfg = TrainConfig()
model = DocClassifier(cfg).cuda()
optim = torch.optim.Adam(model.parameters(), lr=cfg.lr)
scaler = torch.amp.GradScaler()
loader = DataLoader(Docs(cfg, cfg.batch_size * cfg.steps), batch_size=cfg.batch_size, shuffle=True)

attention_maps = []          # leak: grows by one GPU tensor per step
for step, (ids, y) in enumerate(loader):
    ids, y = ids.cuda(), y.cuda()
    with torch.autocast("cuda", dtype=torch.float16):
        logits, attn = model(ids)
        loss = F.cross_entropy(logits, y)
    optim.zero_grad()
    scaler.scale(loss).backward()
    scaler.step(optim)
    scaler.update()
    attention_maps.append(attn)
    print(f"step {step} loss {loss.item():.3f} scale {scaler.get_scale():.0f} mem {torch.cuda.memory_allocated() / 2**30:.2f} GiB")

print(len(attention_maps), "attention maps kept; peak", torch.cuda.max_memory_allocated() / 2**30, "GiB")
