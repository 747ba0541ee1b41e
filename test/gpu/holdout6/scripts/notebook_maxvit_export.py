# %% [markdown]
# # MaxViT-T on our 90-class crop dataset
# Exported from `maxvit_experiments.ipynb` (File > Download as > Python).  Cells were run top to bottom,
# then the last two again after raising the batch size.

# %%
# !pip install -q torchvision==0.26.0
# %matplotlib inline
import time
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from torchvision.models import maxvit_t

torch.backends.cudnn.benchmark = True
device = "cuda" if torch.cuda.is_available() else "cpu"
device

# %%
NUM_CLASSES = 90
IMG = 224            # MaxViT-T needs a multiple of 32 (7x7 windows at every stage)
BATCH_SIZE = 24
LR = 3e-4


class CropDataset(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.randn(3, IMG, IMG), i % NUM_CLASSES


train_dl = DataLoader(CropDataset(BATCH_SIZE * 4), batch_size=BATCH_SIZE, shuffle=True, num_workers=2)
len(train_dl)

# %%
model = maxvit_t(num_classes=NUM_CLASSES).to(device)
opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=0.05)
sum(p.numel() for p in model.parameters()) / 1e6

# %%
def run_epoch(model, dl, opt):
    model.train()
    losses = []
    for x, y in dl:
        x, y = x.to(device), y.to(device)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses

t0 = time.time()
hist = run_epoch(model, train_dl, opt)
print(f"{time.time() - t0:.1f}s", hist)

# %%
torch.cuda.max_memory_allocated() / 2**30

# %% [markdown]
# plenty of room left -> free everything and go again with a bigger batch

# %%
del opt
torch.cuda.empty_cache()
BATCH_SIZE = 48
train_dl = DataLoader(CropDataset(BATCH_SIZE * 4), batch_size=BATCH_SIZE, shuffle=True, num_workers=2)
opt = torch.optim.AdamW(model.parameters(), lr=LR * 2, weight_decay=0.05)

# %%
t0 = time.time()
hist = run_epoch(model, train_dl, opt)
print(f"{time.time() - t0:.1f}s", hist)
torch.cuda.max_memory_allocated() / 2**30
