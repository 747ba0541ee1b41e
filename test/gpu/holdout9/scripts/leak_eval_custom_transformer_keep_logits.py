"""Document classifier with a hand-written Transformer encoder (fp16 autocast + GradScaler).

DELIBERATE LEAK (this file is a held-out example of one): `evaluate()` runs the model without
`torch.no_grad()` and appends every batch's logits -- still attached to their autograd graphs -- to a list on
the GPU, so each evaluation batch keeps all of its saved activations alive until the list is dropped. Memory
grows batch after batch during evaluation; the peak is at the end of evaluation, not in training.
"""
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class Config:
    vocab_size = 32000
    max_len = 1024          # position table capacity
    seq_len = 512           # what the data actually has
    dim = 512
    n_heads = 8
    n_layers = 8
    ff_mult = 4
    dropout = 0.1
    num_classes = 20
    batch_size = 32
    eval_batch_size = 32
    eval_batches = 6
    lr = 3e-4
    train_steps = 10


class MultiHeadSelfAttention(nn.Module):
    def __init__(self, dim, n_heads, dropout):
        super().__init__()
        self.n_heads = n_heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.dropout = dropout

    def forward(self, x, pad_mask):
        B, T, C = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.n_heads, C // self.n_heads).permute(2, 0, 3, 1, 4)
        attn_mask = pad_mask[:, None, None, :]  # True = attend
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask,
                                           dropout_p=self.dropout if self.training else 0.0)
        return self.proj(y.transpose(1, 2).reshape(B, T, C))


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.ln1 = nn.LayerNorm(cfg.dim)
        self.attn = MultiHeadSelfAttention(cfg.dim, cfg.n_heads, cfg.dropout)
        self.ln2 = nn.LayerNorm(cfg.dim)
        self.ff = nn.Sequential(nn.Linear(cfg.dim, cfg.ff_mult * cfg.dim), nn.GELU(),
                                nn.Linear(cfg.ff_mult * cfg.dim, cfg.dim), nn.Dropout(cfg.dropout))

    def forward(self, x, pad_mask):
        x = x + self.attn(self.ln1(x), pad_mask)
        return x + self.ff(self.ln2(x))


class DocClassifier(nn.Module):
    def __init__(self, cfg=Config):
        super().__init__()
        self.tok = nn.Embedding(cfg.vocab_size, cfg.dim)
        self.pos = nn.Embedding(cfg.max_len, cfg.dim)
        self.blocks = nn.ModuleList([Block(cfg) for _ in range(cfg.n_layers)])
        self.ln_f = nn.LayerNorm(cfg.dim)
        self.head = nn.Linear(cfg.dim, cfg.num_classes)

    def forward(self, ids, pad_mask):
        pos = torch.arange(ids.size(1), device=ids.device)
        x = self.tok(ids) + self.pos(pos)
        for blk in self.blocks:
            x = blk(x, pad_mask)
        x = self.ln_f(x)
        m = pad_mask.unsqueeze(-1).to(x.dtype)
        pooled = (x * m).sum(1) / m.sum(1).clamp(min=1)
        return self.head(pooled)


class Docs(Dataset):
    def __init__(self, n):
        self.ids = torch.randint(1, Config.vocab_size, (n, Config.seq_len))
        lengths = torch.randint(Config.seq_len // 4, Config.seq_len + 1, (n,))
        self.mask = torch.arange(Config.seq_len)[None] < lengths[:, None]
        self.y = torch.randint(0, Config.num_classes, (n,))

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.ids[i], self.mask[i], self.y[i]


def evaluate(model, loader, device):
    model.eval()
    all_logits, all_labels = [], []
    for ids, mask, y in loader:                       # no torch.no_grad() here: the leak
        with torch.autocast("cuda", dtype=torch.float16):
            logits = model(ids.to(device), mask.to(device))
        all_logits.append(logits)                     # kept with its graph
        all_labels.append(y.to(device))
        print(f"  eval batch {len(all_logits)}: allocated {torch.cuda.memory_allocated() / 2**30:.2f} GiB")
    logits = torch.cat(all_logits)
    labels = torch.cat(all_labels)
    return (logits.argmax(-1) == labels).float().mean().item()


def main():
    device = "cuda"
    model = DocClassifier().to(device)
    print(f"{sum(p.numel() for p in model.parameters()) / 1e6:.1f}M params")
    optimizer = torch.optim.AdamW(model.parameters(), lr=Config.lr, weight_decay=0.05)
    scaler = torch.amp.GradScaler("cuda")
    train_loader = DataLoader(Docs(Config.batch_size * Config.train_steps), batch_size=Config.batch_size,
                              shuffle=True)
    eval_loader = DataLoader(Docs(Config.eval_batch_size * Config.eval_batches),
                             batch_size=Config.eval_batch_size)

    t0 = time.time()
    model.train()
    for step, (ids, mask, y) in enumerate(train_loader):
        ids, mask, y = ids.to(device), mask.to(device), y.to(device)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.cross_entropy(model(ids, mask), y)
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        if step % 2 == 0:
            print(f"step {step} loss {loss.item():.4f} scale {scaler.get_scale():.0f}")

    acc = evaluate(model, eval_loader, device)
    print(f"eval acc {acc:.3f}  ({time.time() - t0:.1f}s)  peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
