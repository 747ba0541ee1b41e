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
# # Plant disease classifier - ConvNeXt V2 (timm)
# Exported from the team notebook. Data are random tensors here.

# %%
# # !pip install timm
# %matplotlib inline
import time

import timm
import torch
import torch.nn.functional as F

# %%
MODEL = "convnextv2_tiny"
NUM_CLASSES = 38
IMG = 224
BS = 96
EPOCHS = 1
STEPS_PER_EPOCH = 4
device = "cuda"

# %%
model = timm.create_model(MODEL, pretrained=False, num_classes=NUM_CLASSES, drop_path_rate=0.1)
model = model.to(device, memory_format=torch.channels_last)
sum(p.numel() for p in model.parameters()) / 1e6

# %%
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.05)
xs = torch.randn(BS * STEPS_PER_EPOCH, 3, IMG, IMG)
ys = torch.randint(0, NUM_CLASSES, (BS * STEPS_PER_EPOCH,))

# %%
history = []
for epoch in range(EPOCHS):
    model.train()
    t0 = time.time()
    for i in range(STEPS_PER_EPOCH):
        x = xs[i * BS:(i + 1) * BS].to(device, memory_format=torch.channels_last)
        y = ys[i * BS:(i + 1) * BS].to(device)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(x)
            loss = F.cross_entropy(logits, y, label_smoothing=0.1)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        history.append(loss.item())
    print(f"epoch {epoch}: {time.time() - t0:.1f}s, last loss {history[-1]:.3f}")
history[-3:]

# %%
torch.cuda.max_memory_allocated() / 2**30

# %% [markdown]
# ## Predict on the test set (bigger batches, no grad)

# %%
model.eval()
preds = []
with torch.inference_mode():
    for _ in range(3):
        xb = torch.randn(384, 3, IMG, IMG, device=device).to(memory_format=torch.channels_last)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            preds.append(model(xb).argmax(-1).cpu())
torch.cat(preds).shape
