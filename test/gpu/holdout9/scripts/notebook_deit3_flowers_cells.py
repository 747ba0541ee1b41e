# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     name: python3
# ---

# %% [markdown]
# # Flowers-102 with DeiT-III small
# Quick experiment: train at 224 px first, then (after freeing the GPU) retry at 384 px with a smaller batch.

# %%
# !pip install -q timm
# %matplotlib inline
import gc
import time

import timm
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.__version__, timm.__version__

# %%
MODEL_NAME = "deit3_small_patch16_224"
NUM_CLASSES = 102
IMG_SIZE = 224
BATCH_SIZE = 64
LR = 5e-4
STEPS = 8
device = "cuda"

# %%
def make_loader(img_size, batch_size, n_batches):
    x = torch.randn(batch_size * n_batches, 3, img_size, img_size)
    y = torch.randint(0, NUM_CLASSES, (batch_size * n_batches,))
    return DataLoader(TensorDataset(x, y), batch_size=batch_size, shuffle=True, drop_last=True)


def train(model, loader, optimizer, steps):
    model.train()
    history = []
    t0 = time.time()
    for i, (x, y) in enumerate(loader):
        x, y = x.to(device), y.to(device)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.cross_entropy(model(x), y, label_smoothing=0.1)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        history.append(loss.item())
        if i + 1 >= steps:
            break
    print(f"{steps} steps in {time.time() - t0:.1f}s")
    return history

# %%
model = timm.create_model(MODEL_NAME, pretrained=False, num_classes=NUM_CLASSES, drop_path_rate=0.05)
model = model.to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=0.05)
sum(p.numel() for p in model.parameters()) / 1e6

# %%
loader = make_loader(IMG_SIZE, BATCH_SIZE, STEPS)
hist = train(model, loader, optimizer, STEPS)
hist[-3:], torch.cuda.max_memory_allocated() / 2**30

# %% [markdown]
# 224 works. Free everything before trying 384 px (the first attempt at batch 64 ran out of memory).

# %%
del model, optimizer, loader
gc.collect()
torch.cuda.empty_cache()

# %%
IMG_SIZE = 384
BATCH_SIZE = 32
model = timm.create_model(MODEL_NAME, pretrained=False, num_classes=NUM_CLASSES, img_size=IMG_SIZE,
                          drop_path_rate=0.05).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=LR / 2, weight_decay=0.05)
loader = make_loader(IMG_SIZE, BATCH_SIZE, STEPS)
hist384 = train(model, loader, optimizer, STEPS)
hist384[-3:]

# %%
model.eval()
with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
    x, y = next(iter(loader))
    preds = model(x.to(device)).argmax(-1).cpu()
(preds == y).float().mean().item(), torch.cuda.max_memory_allocated() / 2**30
