"""GPT-2 small (random init from GPT2Config, SDPA attention) trained for a few steps on a fixed pool of sequences."""
import os

import torch
from transformers import GPT2Config, GPT2LMHeadModel

steps = int(os.environ.get("STEPS", "12"))
device = os.environ.get("DEVICE", "cuda")
batch_size = 8
seq_len = 1024
torch.manual_seed(0)

config = GPT2Config(use_cache=False)
model = GPT2LMHeadModel(config).to(device)
model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
model.train()
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)

# Tokens from a 1000-word slice of the vocabulary: a model that learns anything lowers the loss within a few steps.
data = torch.randint(0, 1000, (64, seq_len), device=device)
losses = []

for step in range(steps):
    start = (step * batch_size) % len(data)
    input_ids = data[start:start + batch_size]
    optimizer.zero_grad(set_to_none=True)
    outputs = model(input_ids=input_ids, labels=input_ids)
    loss = outputs.loss
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    losses.append(loss.item())
