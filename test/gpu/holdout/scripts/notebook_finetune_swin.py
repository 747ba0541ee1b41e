# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     name: python3
# ---

# %% [markdown]
# # Swin-T fine-tuning on a 37-class pets dataset
# Exported from the notebook (`notebook_finetune_swin.ipynb`); magics are commented out here.

# %%
# !pip install timm
# %matplotlib inline
import gc

import timm
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

# %%
model_name = "swin_tiny_patch4_window7_224"
bs = 96
img_size = 224
n_classes = 37
epochs = 1

# %%
# pets dataset -> tensors (random stand-in)
X = torch.randn(bs * 5, 3, img_size, img_size)
Y = torch.randint(0, n_classes, (bs * 5,))
dl = DataLoader(TensorDataset(X, Y), batch_size=bs, shuffle=True)

# %%
model = timm.create_model(model_name, pretrained=False, num_classes=n_classes).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.05)
sum(p.numel() for p in model.parameters())

# %%
history = []
for epoch in range(epochs):
    model.train()
    for xb, yb in dl:
        xb, yb = xb.cuda(), yb.cuda()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.cross_entropy(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        history.append(loss.item())
        print(f"loss {history[-1]:.4f}")

# %%
model.eval()
with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
    preds = model(X[:bs].cuda()).argmax(-1).cpu()
(preds == Y[:bs]).float().mean()

# %%
print(f"max allocated {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")

# %%
# free the GPU before trying the next backbone
del model, opt
gc.collect()
torch.cuda.empty_cache()
