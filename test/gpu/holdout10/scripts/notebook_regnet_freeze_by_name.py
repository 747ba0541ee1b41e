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
# # Pet breeds: RegNetY-3.2GF, partial fine-tuning
# Freeze the stem and the first two trunk stages by name, train the rest with fp16 AMP; then unfreeze
# everything and continue at a larger resolution.

# %%
# !pip install -q torchvision
# %matplotlib inline
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from torchvision import models

device = "cuda"
torch.__version__

# %%
NUM_CLASSES = 37
BATCH = 64
IMG = 224
FROZEN_PREFIXES = ("stem.", "trunk_output.block1.", "trunk_output.block2.")


class PetsLike(Dataset):
    def __init__(self, n, size):
        self.n, self.size = n, size

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.randn(3, self.size, self.size), i % NUM_CLASSES


def make_loader(batch, size, n_batches=6):
    return DataLoader(PetsLike(batch * n_batches, size), batch_size=batch, shuffle=True, num_workers=2,
                      drop_last=True)


train_loader = make_loader(BATCH, IMG)
len(train_loader)

# %%
model = models.regnet_y_3_2gf(weights=None)
model.fc = nn.Linear(model.fc.in_features, NUM_CLASSES)
for name, p in model.named_parameters():
    if name.startswith(FROZEN_PREFIXES):
        p.requires_grad = False
model = model.to(device, memory_format=torch.channels_last)
n_train = sum(p.numel() for p in model.parameters() if p.requires_grad)
n_all = sum(p.numel() for p in model.parameters())
print(f"trainable {n_train:,} / {n_all:,}")

# %%
def run_epoch(model, loader, opt, scaler, max_steps=None):
    model.train()
    t0 = time.time()
    for step, (x, y) in enumerate(loader):
        x = x.to(device, non_blocking=True).contiguous(memory_format=torch.channels_last)
        y = y.to(device, non_blocking=True)
        with torch.autocast(device_type="cuda", dtype=torch.float16):
            loss = F.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        if max_steps and step + 1 >= max_steps:
            break
    return loss.item(), time.time() - t0


# %%
opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.05, momentum=0.9,
                      weight_decay=5e-5, nesterov=True)
scaler = torch.amp.GradScaler("cuda")
run_epoch(model, train_loader, opt, scaler)

# %%
torch.cuda.max_memory_allocated() / 2**30

# %% [markdown]
# Phase 2: unfreeze everything, bigger images, smaller batch.

# %%
del opt, scaler, train_loader
torch.cuda.empty_cache()

for p in model.parameters():
    p.requires_grad = True
BATCH, IMG = 48, 288
train_loader = make_loader(BATCH, IMG)
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-5, nesterov=True)
scaler = torch.amp.GradScaler("cuda")
loss, secs = run_epoch(model, train_loader, opt, scaler)
print(f"phase 2 loss {loss:.3f} in {secs:.1f}s, scale {scaler.get_scale()}")

# %%
@torch.no_grad()
def predict(model, loader):
    model.eval()
    preds = []
    for x, _ in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            preds.append(model(x.to(device).contiguous(memory_format=torch.channels_last)).argmax(1))
    return torch.cat(preds)


preds = predict(model, make_loader(128, IMG, n_batches=2))
preds.shape, torch.cuda.max_memory_allocated() / 2**30
