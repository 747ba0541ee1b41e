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
# # Fine-tuning OPT-350m on support tickets
# Exported from `opt350m_finetune.ipynb`. Full fine-tune in fp32 (the checkpoint is stored in fp16, so we ask for
# float32 explicitly), then a quick perplexity check and a sample generation.

# %%
# !pip install -q transformers accelerate
# %matplotlib inline

# %%
import math
import time

import torch
from torch.utils.data import DataLoader, Dataset
from transformers import AutoModelForCausalLM

device = "cuda"
torch.manual_seed(0)

# %%
MODEL_ID = "facebook/opt-350m"
BATCH = 4
SEQ = 512
LR = 2e-5
STEPS = 6

# %%
model = AutoModelForCausalLM.from_pretrained(MODEL_ID, dtype=torch.float32)
model.to(device)
model.config

# %%
class Tickets(Dataset):
    def __init__(self, n, seq, vocab):
        self.x = torch.randint(2, vocab, (n, seq))

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i]


train_loader = DataLoader(Tickets(BATCH * STEPS, SEQ, model.config.vocab_size), batch_size=BATCH, shuffle=True)
val_loader = DataLoader(Tickets(BATCH * 2, SEQ, model.config.vocab_size), batch_size=BATCH)
len(train_loader), len(val_loader)

# %%
optimizer = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=0.0)
model.train()
history = []
t0 = time.time()
for step, ids in enumerate(train_loader):
    ids = ids.to(device)
    out = model(input_ids=ids, labels=ids)
    out.loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    optimizer.zero_grad()
    history.append(out.loss.item())
    print(step, round(history[-1], 3), f"{time.time() - t0:.1f}s")
history[-3:]

# %%
model.eval()
nll = []
with torch.no_grad():
    for ids in val_loader:
        ids = ids.to(device)
        nll.append(model(input_ids=ids, labels=ids).loss.item())
print("val ppl", math.exp(sum(nll) / len(nll)))

# %%
torch.cuda.max_memory_allocated() / 2**30

# %%
# free the optimizer state before generating (the kernel OOM'd here once on a smaller card)
del optimizer, out
torch.cuda.empty_cache()

# %%
prompt = torch.randint(2, model.config.vocab_size, (1, 32), device=device)
with torch.no_grad():
    gen = model.generate(prompt, max_new_tokens=32, do_sample=True, top_p=0.9)
gen.shape
