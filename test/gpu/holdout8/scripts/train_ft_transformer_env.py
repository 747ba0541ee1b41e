"""FT-Transformer (Gorishniy et al. 2021) on a wide tabular dataset: 100 numeric + 26 categorical columns.

Hyper-parameters come from environment variables so the same file runs in a sweep:
    BATCH_SIZE=2048 D_TOKEN=192 N_BLOCKS=3 python train_ft_transformer_env.py
"""
import os
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

BATCH_SIZE = int(os.environ.get("BATCH_SIZE", "2048"))
D_TOKEN = int(os.environ.get("D_TOKEN", "192"))
N_BLOCKS = int(os.environ.get("N_BLOCKS", "3"))
N_HEADS = int(os.environ.get("N_HEADS", "8"))
FFN_FACTOR = float(os.environ.get("FFN_FACTOR", "1.333"))
N_NUM = int(os.environ.get("N_NUM_FEATURES", "100"))
CAT_CARDINALITIES = [int(c) for c in os.environ.get(
    "CAT_CARDINALITIES", ",".join(["1000"] * 10 + ["50"] * 16)).split(",")]
N_CLASSES = int(os.environ.get("N_CLASSES", "7"))
LR = float(os.environ.get("LR", "1e-4"))
EPOCHS = int(os.environ.get("EPOCHS", "2"))
STEPS_PER_EPOCH = int(os.environ.get("STEPS_PER_EPOCH", "4"))


class TabularData(Dataset):
    def __init__(self, n):
        rng = np.random.default_rng(0)
        self.x_num = rng.standard_normal((n, N_NUM)).astype(np.float32)
        self.x_cat = np.stack([rng.integers(0, c, n) for c in CAT_CARDINALITIES], axis=1)
        self.y = rng.integers(0, N_CLASSES, n)

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return (torch.from_numpy(self.x_num[i]), torch.from_numpy(self.x_cat[i]).long(),
                torch.tensor(self.y[i]).long())


class FeatureTokenizer(nn.Module):
    def __init__(self, n_num, cardinalities, d_token):
        super().__init__()
        self.num_weight = nn.Parameter(torch.randn(n_num, d_token) / d_token ** 0.5)
        self.num_bias = nn.Parameter(torch.zeros(n_num, d_token))
        offsets = torch.tensor([0] + cardinalities[:-1]).cumsum(0)
        self.register_buffer("cat_offsets", offsets)
        self.cat_embeddings = nn.Embedding(sum(cardinalities), d_token)
        self.cat_bias = nn.Parameter(torch.zeros(len(cardinalities), d_token))

    def forward(self, x_num, x_cat):
        num_tokens = self.num_weight[None] * x_num[:, :, None] + self.num_bias[None]
        cat_tokens = self.cat_embeddings(x_cat + self.cat_offsets[None]) + self.cat_bias[None]
        return torch.cat([num_tokens, cat_tokens], dim=1)


class Block(nn.Module):
    def __init__(self, d, n_heads, ffn_factor, attn_dropout=0.2, ffn_dropout=0.1, prenorm_attn=True):
        super().__init__()
        self.norm1 = nn.LayerNorm(d) if prenorm_attn else nn.Identity()
        self.attn = nn.MultiheadAttention(d, n_heads, dropout=attn_dropout, batch_first=True)
        self.norm2 = nn.LayerNorm(d)
        d_hidden = int(d * ffn_factor)
        self.ffn = nn.Sequential(nn.Linear(d, d_hidden * 2), ReGLU(), nn.Dropout(ffn_dropout),
                                 nn.Linear(d_hidden, d))

    def forward(self, x):
        h = self.norm1(x)
        x = x + self.attn(h, h, h)[0]
        x = x + self.ffn(self.norm2(x))
        return x


class ReGLU(nn.Module):
    def forward(self, x):
        a, b = x.chunk(2, dim=-1)
        return a * F.relu(b)


class FTTransformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.tokenizer = FeatureTokenizer(N_NUM, CAT_CARDINALITIES, D_TOKEN)
        self.cls = nn.Parameter(torch.randn(1, 1, D_TOKEN) * 0.02)
        # the first block has no attention pre-norm (the tokens are already normalised)
        self.blocks = nn.ModuleList([Block(D_TOKEN, N_HEADS, FFN_FACTOR, prenorm_attn=(i > 0))
                                     for i in range(N_BLOCKS)])
        self.head = nn.Sequential(nn.LayerNorm(D_TOKEN), nn.ReLU(), nn.Linear(D_TOKEN, N_CLASSES))

    def forward(self, x_num, x_cat):
        x = self.tokenizer(x_num, x_cat)
        x = torch.cat([self.cls.expand(x.size(0), -1, -1), x], dim=1)
        for blk in self.blocks:
            x = blk(x)
        return self.head(x[:, 0])


def main():
    device = torch.device("cuda")
    model = FTTransformer().to(device)
    print(f"tokens per row: {1 + N_NUM + len(CAT_CARDINALITIES)}, params "
          f"{sum(p.numel() for p in model.parameters()) / 1e6:.2f}M")

    loader = DataLoader(TabularData(BATCH_SIZE * STEPS_PER_EPOCH), batch_size=BATCH_SIZE, shuffle=True,
                        num_workers=2, drop_last=True)
    no_wd = [p for n, p in model.named_parameters() if "norm" in n or "bias" in n or "embeddings" in n]
    wd = [p for n, p in model.named_parameters() if not ("norm" in n or "bias" in n or "embeddings" in n)]
    optimizer = torch.optim.AdamW([{"params": wd, "weight_decay": 1e-5},
                                   {"params": no_wd, "weight_decay": 0.0}], lr=LR)

    for epoch in range(EPOCHS):
        model.train()
        t0 = time.time()
        for step, (x_num, x_cat, y) in enumerate(loader):
            x_num, x_cat, y = x_num.to(device), x_cat.to(device), y.to(device)
            logits = model(x_num, x_cat)
            loss = F.cross_entropy(logits, y)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch} loss {loss.item():.4f} {time.time() - t0:.1f}s")
    print(f"peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
