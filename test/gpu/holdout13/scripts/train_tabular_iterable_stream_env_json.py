"""Click-through prediction from a streamed table (IterableDataset, sharded over workers).

Config comes as JSON in the TAB_CFG environment variable, e.g.
    TAB_CFG='{"batch_size": 4096, "hidden": [1024, 512]}' python train_tabular_iterable_stream_env_json.py
"""
import json
import math
import os

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, IterableDataset, get_worker_info

DEFAULT_CFG = '{"n_features": 1024, "hidden": [4096, 4096, 2048, 1024], "dropout": 0.2, ' \
              '"batch_size": 8192, "accum_steps": 2, "max_updates": 4, "lr": 1e-3, "chunk_rows": 4096}'
cfg = json.loads(os.environ.get("TAB_CFG", DEFAULT_CFG))
print("config:", cfg)


class ParquetLikeStream(IterableDataset):
    """Pretends to read row groups of a big file; each worker takes every k-th row group."""

    def __init__(self, n_rows, n_features, chunk_rows):
        self.n_rows, self.n_features, self.chunk_rows = n_rows, n_features, chunk_rows

    def __iter__(self):
        info = get_worker_info()
        wid, nw = (info.id, info.num_workers) if info else (0, 1)
        n_chunks = math.ceil(self.n_rows / self.chunk_rows)
        for c in range(wid, n_chunks, nw):
            g = torch.Generator().manual_seed(c)
            x = torch.randn(self.chunk_rows, self.n_features, generator=g)
            y = (torch.rand(self.chunk_rows, generator=g) < 0.1).float()
            for i in range(self.chunk_rows):
                yield x[i], y[i]


def make_mlp(n_in, hidden, dropout):
    layers = []
    for h in hidden:
        layers += [nn.Linear(n_in, h), nn.BatchNorm1d(h), nn.ReLU(), nn.Dropout(dropout)]
        n_in = h
    layers.append(nn.Linear(n_in, 1))
    return nn.Sequential(*layers)


device = torch.device("cuda")
model = make_mlp(cfg["n_features"], cfg["hidden"], cfg["dropout"]).to(device)
print(model)

n_rows = cfg["batch_size"] * cfg["accum_steps"] * cfg["max_updates"]
stream = ParquetLikeStream(n_rows, cfg["n_features"], cfg["chunk_rows"])
loader = DataLoader(stream, batch_size=cfg["batch_size"], num_workers=2, pin_memory=True)

optimizer = torch.optim.AdamW(model.parameters(), lr=cfg["lr"], weight_decay=1e-5)
criterion = nn.BCEWithLogitsLoss(pos_weight=torch.tensor(9.0, device=device))

updates = 0
model.train()
for i, (x, y) in enumerate(loader):
    x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
    logit = model(x).squeeze(1)
    loss = criterion(logit, y) / cfg["accum_steps"]
    loss.backward()
    if (i + 1) % cfg["accum_steps"] == 0:
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        updates += 1
        print(f"update {updates} loss {loss.item() * cfg['accum_steps']:.4f}")
        if updates >= cfg["max_updates"]:
            break

print("peak GiB", round(torch.cuda.max_memory_allocated() / 2**30, 3))
