# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     name: python3
# ---

# %% [markdown]
# # Food-101 with EdgeNeXt-S (timm)
# Exported from the notebook. Synthetic images stand in for the dataset.

# %%
# !pip install timm
import time

import timm
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.__version__, timm.__version__

# %%
MODEL_NAME = "edgenext_small"
NUM_CLASSES = 101
IMG = 256
BS = 64
LR = 1e-3
EPOCHS = 1
STEPS = 4


class FoodFake(Dataset):
    def __init__(self, n, img):
        self.n, self.img = n, img

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.randn(3, self.img, self.img), i % NUM_CLASSES


train_dl = DataLoader(FoodFake(BS * STEPS, IMG), batch_size=BS, shuffle=True, num_workers=2)
len(train_dl)

# %%
model = timm.create_model(MODEL_NAME, pretrained=False, num_classes=NUM_CLASSES, drop_path_rate=0.1).to(device)
sum(p.numel() for p in model.parameters()) / 1e6

# %%
criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
optimizer = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=0.05)


def fit(model, dl, epochs):
    history = []
    for ep in range(epochs):
        model.train()
        t0 = time.time()
        for xb, yb in dl:
            xb, yb = xb.to(device), yb.to(device)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = criterion(model(xb), yb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            history.append(loss.item())
        print(f"epoch {ep}: loss {history[-1]:.3f} ({time.time() - t0:.1f}s)")
    return history


hist = fit(model, train_dl, EPOCHS)
torch.cuda.max_memory_allocated() / 2**30

# %% [markdown]
# Ran out of memory when I bumped the batch size, so free everything first.

# %%
del model, optimizer
torch.cuda.empty_cache()
torch.cuda.memory_allocated() / 2**20

# %%
# second run: higher resolution, larger batch, rebuilt from scratch
IMG = 320
BS = 96
train_dl = DataLoader(FoodFake(BS * STEPS, IMG), batch_size=BS, shuffle=True, num_workers=2)
model = timm.create_model(MODEL_NAME, pretrained=False, num_classes=NUM_CLASSES, drop_path_rate=0.1).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=LR / 2, weight_decay=0.05)
hist2 = fit(model, train_dl, EPOCHS)

# %%
print("peak GiB", torch.cuda.max_memory_allocated() / 2**30)
