#!/usr/bin/env python
"""Continued pre-training of GPT-2 on a packed token stream.

All knobs come from the environment so the same file runs on the cluster and on my box:

    BS=8 SEQ_LEN=512 ACCUM=4 MAX_STEPS=3 python train_gpt2_env_accum.py
"""
import math
import os
import time

import torch
from torch.utils.data import DataLoader, Dataset
from transformers import GPT2LMHeadModel, get_linear_schedule_with_warmup

MODEL_NAME = os.environ.get("MODEL_NAME", "gpt2")
BATCH_SIZE = int(os.environ.get("BS", "8"))
SEQ_LEN = int(os.environ.get("SEQ_LEN", "512"))
GRAD_ACCUM = int(os.environ.get("ACCUM", "4"))
LR = float(os.environ.get("LR", "3e-4"))
MAX_STEPS = int(os.environ.get("MAX_STEPS", "3"))
EVAL_BATCHES = int(os.environ.get("EVAL_BATCHES", "2"))
LOG_EVERY = 1
SEED = 1337


class PackedTokens(Dataset):
    """A long token stream cut into fixed blocks (what run_clm's group_texts produces)."""

    def __init__(self, n_tokens, block_size, vocab_size=50257, seed=0):
        g = torch.Generator().manual_seed(seed)
        self.tokens = torch.randint(0, vocab_size, (n_tokens,), generator=g)
        self.block_size = block_size

    def __len__(self):
        return len(self.tokens) // self.block_size

    def __getitem__(self, idx):
        start = idx * self.block_size
        chunk = self.tokens[start:start + self.block_size]
        return {"input_ids": chunk, "labels": chunk.clone()}


def split_decay(model, weight_decay=0.1):
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        (no_decay if p.ndim < 2 else decay).append(p)
    return [
        {"params": decay, "weight_decay": weight_decay},
        {"params": no_decay, "weight_decay": 0.0},
    ]


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    losses = []
    for i, batch in enumerate(loader):
        if i >= EVAL_BATCHES:
            break
        batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}
        losses.append(model(**batch).loss.item())
    model.train()
    mean = sum(losses) / max(1, len(losses))
    return mean, math.exp(min(mean, 20))


def main():
    torch.manual_seed(SEED)
    device = torch.device("cuda")

    tokens_needed = BATCH_SIZE * SEQ_LEN * GRAD_ACCUM * MAX_STEPS
    train_ds = PackedTokens(tokens_needed, SEQ_LEN, seed=0)
    val_ds = PackedTokens(BATCH_SIZE * SEQ_LEN * EVAL_BATCHES, SEQ_LEN, seed=1)
    train_loader = DataLoader(train_ds, batch_size=BATCH_SIZE, shuffle=True, drop_last=True, pin_memory=True)
    val_loader = DataLoader(val_ds, batch_size=BATCH_SIZE)

    model = GPT2LMHeadModel.from_pretrained(MODEL_NAME)
    model.to(device)
    model.train()

    optimizer = torch.optim.AdamW(split_decay(model), lr=LR, betas=(0.9, 0.95), eps=1e-8)
    scheduler = get_linear_schedule_with_warmup(optimizer, num_warmup_steps=1, num_training_steps=MAX_STEPS)

    print(f"model={MODEL_NAME} bs={BATCH_SIZE} seq={SEQ_LEN} accum={GRAD_ACCUM} "
          f"effective tokens/step={BATCH_SIZE * SEQ_LEN * GRAD_ACCUM}")

    step, micro_step = 0, 0
    running = 0.0
    t0 = time.time()
    optimizer.zero_grad(set_to_none=True)
    while step < MAX_STEPS:
        for batch in train_loader:
            batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}
            outputs = model(**batch)
            loss = outputs.loss / GRAD_ACCUM
            loss.backward()
            running += loss.item()
            micro_step += 1

            if micro_step % GRAD_ACCUM != 0:
                continue

            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            step += 1
            if step % LOG_EVERY == 0:
                dt = time.time() - t0
                print(f"step {step:4d} | loss {running:.4f} | lr {scheduler.get_last_lr()[0]:.2e} | {dt:.1f}s")
            running = 0.0
            if step >= MAX_STEPS:
                break

    val_loss, ppl = evaluate(model, val_loader, device)
    print(f"val loss {val_loss:.4f} ppl {ppl:.1f}")


if __name__ == "__main__":
    main()
