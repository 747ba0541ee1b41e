# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Sentiment classifier from scratch (DistilBERT-sized)
# Exported from `distilbert_sentiment.ipynb`. Random token ids stand in for the tokenized reviews.

# %%
import time
import torch
from torch.utils.data import TensorDataset, DataLoader
from transformers import DistilBertConfig, DistilBertForSequenceClassification

device = "cuda"
torch.manual_seed(0)

# %%
MAX_LEN = 384
BATCH_SIZE = 64
N_LABELS = 3
N_STEPS = 6

# %%
cfg = DistilBertConfig(
    vocab_size=30522,
    dim=768,
    n_layers=6,
    n_heads=12,
    hidden_dim=3072,
    max_position_embeddings=512,
    dropout=0.1,
    attention_dropout=0.1,
    num_labels=N_LABELS,
)
model = DistilBertForSequenceClassification(cfg)
model = model.to(device)
sum(p.numel() for p in model.parameters()) / 1e6

# %%
ids = torch.randint(1000, cfg.vocab_size, (BATCH_SIZE * N_STEPS, MAX_LEN))
mask = torch.ones_like(ids)
# some reviews are shorter: pad the tail
lengths = torch.randint(MAX_LEN // 2, MAX_LEN + 1, (ids.size(0),))
for i, L in enumerate(lengths.tolist()):
    ids[i, L:] = 0
    mask[i, L:] = 0
y = torch.randint(0, N_LABELS, (ids.size(0),))
train_dl = DataLoader(TensorDataset(ids, mask, y), batch_size=BATCH_SIZE, shuffle=True)
len(train_dl)

# %%
opt = torch.optim.AdamW(model.parameters(), lr=3e-5, weight_decay=0.01)

# %%
model.train()
history = []
t0 = time.time()
for step, (xb, mb, yb) in enumerate(train_dl):
    xb, mb, yb = xb.to(device), mb.to(device), yb.to(device)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        out = model(input_ids=xb, attention_mask=mb, labels=yb)
    out.loss.backward()
    opt.step()
    opt.zero_grad()
    history.append(out.loss.item())
print(f"{len(history)} steps in {time.time() - t0:.1f}s, last loss {history[-1]:.3f}")

# %%
print(torch.cuda.memory_summary(abbreviated=True))

# %%
# free the GPU before trying the next experiment
del model, opt, out
torch.cuda.empty_cache()
