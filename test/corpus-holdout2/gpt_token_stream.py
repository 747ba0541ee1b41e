"""Pre-train a small GPT on pre-tokenised uint16 shards streamed by an IterableDataset."""
import glob
import math
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, IterableDataset, get_worker_info

config = {
    "seq_len": 512,
    "batch_size": 16,
    "d_model": 512,
    "n_layer": 8,
    "n_head": 8,
    "vocab_size": 50304,
    "max_len": 4096,
    "lr": 6e-4,
    "max_steps": 50_000,
    "num_workers": 2,
}


class TokenStream(IterableDataset):
    def __init__(self, pattern, seq_len):
        self.shards = sorted(glob.glob(pattern))
        self.seq_len = seq_len

    def __iter__(self):
        info = get_worker_info()
        shards = self.shards if info is None else self.shards[info.id::info.num_workers]
        for path in shards:
            arr = np.memmap(path, dtype=np.uint16, mode="r")
            for i in range(0, len(arr) - self.seq_len - 1, self.seq_len):
                chunk = torch.from_numpy(arr[i:i + self.seq_len + 1].astype(np.int64))
                yield chunk[:-1].to("cuda", non_blocking=True), chunk[1:].to("cuda", non_blocking=True)  # expect: OOM112


def seed_worker(worker_id):
    seed = torch.initial_seed() % 2 ** 32
    np.random.seed(seed)
    random.seed(seed)
    torch.cuda.manual_seed(seed)


class GPT(nn.Module):
    def __init__(self, vocab_size, d_model, n_layer, n_head, max_len):
        super().__init__()
        self.tok = nn.Embedding(vocab_size, d_model)
        self.pos = nn.Embedding(max_len, d_model)
        layer = nn.TransformerEncoderLayer(d_model, n_head, 4 * d_model, dropout=0.0, batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, num_layers=n_layer)
        self.ln_f = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)
        self.lm_head.weight = self.tok.weight

    def forward(self, idx):
        T = idx.size(1)
        x = self.tok(idx) + self.pos(torch.arange(T, device=idx.device))
        mask = nn.Transformer.generate_square_subsequent_mask(T, device=idx.device)
        x = self.blocks(x, mask=mask, is_causal=True)
        return self.lm_head(self.ln_f(x))


ds = TokenStream("data/fineweb_edu/train_*.bin", config["seq_len"])
loader = DataLoader(ds, batch_size=config["batch_size"], num_workers=config["num_workers"], worker_init_fn=seed_worker)

model = GPT(config["vocab_size"], config["d_model"], config["n_layer"], config["n_head"], config["max_len"]).cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=config["lr"], betas=(0.9, 0.95), weight_decay=0.1)


def lr_at(step, warmup=1000):
    if step < warmup:
        return config["lr"] * step / warmup
    return config["lr"] * 0.5 * (1 + math.cos(math.pi * step / config["max_steps"]))


step = 0
for x, y in loader:
    for g in optimizer.param_groups:
        g["lr"] = lr_at(step)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        logits = model(x)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1))
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    if step % 100 == 0:
        print(f"step {step} loss {loss.item():.4f}")
    step += 1
    if step >= config["max_steps"]:
        break
