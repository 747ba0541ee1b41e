#!/usr/bin/env python3
# Small Llama (GQA) pre-training run, pure bf16 weights + AdamW.
# Config is read from configs/llama_small.json so the sweep tool can rewrite it.
import json
import os
import time

import torch
from torch.utils.data import DataLoader, Dataset
from transformers import LlamaConfig, LlamaForCausalLM

CFG_FILE = "configs/llama_small.json"   # relative to the working dir (we always launch from scripts/)

with open(CFG_FILE) as fh:
    cfg = json.load(fh)

train_cfg = cfg["train"]


class PackedTokens(Dataset):
    """Packed pre-training sequences (random ids in the smoke test)."""

    def __init__(self, n_seqs, seq_len, vocab):
        self.tokens = torch.randint(0, vocab, (n_seqs, seq_len + 1))

    def __len__(self):
        return self.tokens.shape[0]

    def __getitem__(self, i):
        row = self.tokens[i]
        return row[:-1], row[1:]


def main():
    device = torch.device("cuda")
    model_config = LlamaConfig(**cfg["model"])
    model = LlamaForCausalLM(model_config)
    model = model.to(device=device, dtype=torch.bfloat16)   # pure bf16, no autocast
    n_params = sum(p.numel() for p in model.parameters())
    print(f"model params: {n_params / 1e6:.1f}M")

    ds = PackedTokens(train_cfg["batch_size"] * train_cfg["max_steps"], train_cfg["seq_len"],
                      cfg["model"]["vocab_size"])
    loader = DataLoader(ds, batch_size=train_cfg["batch_size"], shuffle=True, drop_last=True)

    optimizer = torch.optim.AdamW(model.parameters(), lr=train_cfg["lr"], betas=tuple(train_cfg["betas"]),
                                  weight_decay=train_cfg["weight_decay"], eps=1e-8)

    model.train()
    step = 0
    t0 = time.time()
    for inputs, targets in loader:
        inputs, targets = inputs.to(device), targets.to(device)
        logits = model(input_ids=inputs).logits
        loss = torch.nn.functional.cross_entropy(logits.view(-1, logits.size(-1)).float(), targets.reshape(-1))
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        step += 1
        if step % train_cfg["log_interval"] == 0:
            tok_s = step * inputs.numel() / (time.time() - t0)
            print(f"step {step:3d} | loss {loss.item():.3f} | {tok_s:,.0f} tok/s")
        if step >= train_cfg["max_steps"]:
            break


if __name__ == "__main__":
    main()
