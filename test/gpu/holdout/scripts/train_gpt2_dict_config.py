"""Pre-train a GPT-2 small from scratch on tokenized shards (random ids here)."""
import math

import torch
from torch.utils.data import DataLoader, Dataset
from transformers import GPT2Config, GPT2LMHeadModel

config = dict(
    seq_len=256,
    batch_size=16,
    n_layer=12,
    n_head=12,
    n_embd=768,
    vocab_size=50257,
    n_positions=1024,
    lr=3e-4,
    weight_decay=0.1,
    warmup_steps=2,
    max_steps=5,
    grad_clip=1.0,
    pad_tail=16,  # last tokens of every row are padding -> label -100
)


class TokenShard(Dataset):
    def __init__(self, n_rows, seq_len, vocab_size, pad_tail):
        self.data = torch.randint(0, vocab_size, (n_rows, seq_len))
        self.pad_tail = pad_tail

    def __len__(self):
        return self.data.size(0)

    def __getitem__(self, i):
        ids = self.data[i]
        labels = ids.clone()
        labels[-self.pad_tail:] = -100
        attn = torch.ones_like(ids)
        attn[-self.pad_tail:] = 0
        return {"input_ids": ids, "attention_mask": attn, "labels": labels}


def lr_lambda(step):
    if step < config["warmup_steps"]:
        return (step + 1) / config["warmup_steps"]
    return 0.5 * (1 + math.cos(math.pi * step / config["max_steps"]))


def main():
    device = "cuda"
    gpt_cfg = GPT2Config(
        vocab_size=config["vocab_size"],
        n_positions=config["n_positions"],
        n_embd=config["n_embd"],
        n_layer=config["n_layer"],
        n_head=config["n_head"],
    )
    model = GPT2LMHeadModel(gpt_cfg).to(device)
    print(f"params: {sum(p.numel() for p in model.parameters()) / 1e6:.1f}M")

    ds = TokenShard(config["batch_size"] * config["max_steps"], config["seq_len"], config["vocab_size"],
                    config["pad_tail"])
    loader = DataLoader(ds, batch_size=config["batch_size"], shuffle=True)

    optimizer = torch.optim.AdamW(model.parameters(), lr=config["lr"], weight_decay=config["weight_decay"],
                                  betas=(0.9, 0.95), fused=True)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda)

    model.train()
    step = 0
    for batch in loader:
        batch = {k: v.to(device) for k, v in batch.items()}
        out = model(**batch)
        out.loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), config["grad_clip"])
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad(set_to_none=True)
        step += 1
        print(f"step {step} loss {out.loss.item():.3f}")
        if step >= config["max_steps"]:
            break


if __name__ == "__main__":
    main()
