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
# # Oxford-IIIT Pets with Twins-SVT-S (timm)
# Fine-tune on 37 breeds. (Synthetic tensors stand in for the images in this copy.)

# %%
# !pip install -q timm
# %matplotlib inline
import time

import timm
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

device = torch.device("cuda")
torch.cuda.get_device_name(0)

# %%
MODEL_NAME = "twins_svt_small"
NUM_CLASSES = 37
IMG_SIZE = 224
BATCH_SIZE = 64
EPOCHS = 1
STEPS_PER_EPOCH = 5
LR = 5e-4

# %%
class PetsDataset(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.randn(3, IMG_SIZE, IMG_SIZE), i % NUM_CLASSES


train_dl = DataLoader(PetsDataset(BATCH_SIZE * STEPS_PER_EPOCH), batch_size=BATCH_SIZE, shuffle=True, num_workers=4)
valid_dl = DataLoader(PetsDataset(256), batch_size=128, num_workers=4)
len(train_dl), len(valid_dl)

# %%
model = timm.create_model(MODEL_NAME, pretrained=False, num_classes=NUM_CLASSES, drop_path_rate=0.2)
model = model.to(device)
sum(p.numel() for p in model.parameters()) / 1e6

# %%
optimizer = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=0.05)
scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=LR, total_steps=EPOCHS * STEPS_PER_EPOCH)
history = []

# %%
for epoch in range(EPOCHS):
    model.train()
    t0 = time.time()
    for xb, yb in train_dl:
        xb, yb = xb.to(device), yb.to(device)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.cross_entropy(model(xb), yb)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
        history.append(loss.item())
    print(f"epoch {epoch}: loss {history[-1]:.4f} ({time.time() - t0:.0f}s)")

# %%
model.eval()
all_probs, all_labels = [], []
with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
    for xb, yb in valid_dl:
        all_probs.append(model(xb.to(device)).float().softmax(-1).cpu())
        all_labels.append(yb)
probs = torch.cat(all_probs)
acc = (probs.argmax(1) == torch.cat(all_labels)).float().mean().item()
acc

# %%
# import matplotlib.pyplot as plt; plt.plot(history)
history[-3:]

# %%
torch.cuda.max_memory_allocated() / 2**30

# %%
del optimizer, scheduler
torch.cuda.empty_cache()
