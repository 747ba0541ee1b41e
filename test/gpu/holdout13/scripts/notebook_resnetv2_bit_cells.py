# %% [markdown]
# # BiT (ResNetV2-50x1) on our satellite tiles
# Exported from `bit_satellite.ipynb`. Run top to bottom.

# %%
# !pip install -q timm
# %matplotlib inline
import time

import timm
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

device = "cuda"
torch.manual_seed(42)

# %%
NUM_CLASSES = 21
IMG = 224
BS = 32


class Tiles(Dataset):
    def __init__(self, n, img):
        self.n, self.img = n, img

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.randn(3, self.img, self.img), i % NUM_CLASSES


def run(model, loader, optimizer, scaler, max_steps):
    model.train()
    losses = []
    for step, (x, y) in enumerate(loader):
        x, y = x.to(device), y.to(device)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        losses.append(loss.item())
        if step + 1 >= max_steps:
            break
    return losses


# %%
model = timm.create_model("resnetv2_50x1_bit", pretrained=False, num_classes=NUM_CLASSES).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.003, momentum=0.9)
scaler = torch.amp.GradScaler("cuda")
loader = DataLoader(Tiles(BS * 4, IMG), batch_size=BS, shuffle=True, num_workers=2)
t0 = time.time()
history = run(model, loader, optimizer, scaler, max_steps=4)
print(f"{time.time() - t0:.1f}s", torch.cuda.max_memory_allocated() / 2**30)
history

# %% [markdown]
# Looks fine, BiT recipe says fine-tune at higher resolution. Free everything and start again bigger.

# %%
del model, optimizer, scaler, loader
torch.cuda.empty_cache()

# %%
IMG = 320
BS = 48
model = timm.create_model("resnetv2_50x1_bit", pretrained=False, num_classes=NUM_CLASSES).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.003, momentum=0.9)
scaler = torch.amp.GradScaler("cuda")
loader = DataLoader(Tiles(BS * 4, IMG), batch_size=BS, shuffle=True, num_workers=2)
history = run(model, loader, optimizer, scaler, max_steps=4)
history[-1], torch.cuda.max_memory_allocated() / 2**30
