#!/usr/bin/env python
# Causal-LM fine-tuning of GPT-2 on (fake) tokenized text, bf16 autocast.
import argparse
import random

import torch
from torch.utils.data import DataLoader, Dataset
from transformers import AutoModelForCausalLM, get_linear_schedule_with_warmup


class PackedTextDataset(Dataset):
    """Pretend these are packed blocks of a tokenized corpus."""

    def __init__(self, num_blocks, block_size, vocab_size):
        g = torch.Generator().manual_seed(0)
        self.data = torch.randint(0, vocab_size, (num_blocks, block_size), generator=g)

    def __len__(self):
        return self.data.size(0)

    def __getitem__(self, idx):
        ids = self.data[idx]
        return {"input_ids": ids, "attention_mask": torch.ones_like(ids)}


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model_name_or_path", type=str, default="gpt2")
    p.add_argument("--block_size", type=int, default=512)
    p.add_argument("--per_device_train_batch_size", type=int, default=16)
    p.add_argument("--learning_rate", type=float, default=5e-5)
    p.add_argument("--weight_decay", type=float, default=0.0)
    p.add_argument("--num_warmup_steps", type=int, default=1)
    p.add_argument("--max_train_steps", type=int, default=5)
    p.add_argument("--seed", type=int, default=42)
    return p.parse_args()


def main():
    args = parse_args()
    random.seed(args.seed)
    torch.manual_seed(args.seed)

    model = AutoModelForCausalLM.from_pretrained(args.model_name_or_path)
    model.to("cuda")
    vocab_size = model.config.vocab_size

    train_dataset = PackedTextDataset(args.max_train_steps * args.per_device_train_batch_size,
                                      args.block_size, vocab_size)
    train_dataloader = DataLoader(train_dataset, shuffle=True, batch_size=args.per_device_train_batch_size)

    no_decay = ["bias", "ln_1.weight", "ln_2.weight", "ln_f.weight"]
    grouped = [
        {"params": [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)],
         "weight_decay": args.weight_decay},
        {"params": [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)],
         "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(grouped, lr=args.learning_rate)
    lr_scheduler = get_linear_schedule_with_warmup(optimizer, args.num_warmup_steps, args.max_train_steps)

    model.train()
    completed_steps = 0
    for step, batch in enumerate(train_dataloader):
        batch = {k: v.cuda() for k, v in batch.items()}
        with torch.autocast("cuda", dtype=torch.bfloat16):
            outputs = model(**batch, labels=batch["input_ids"])
        loss = outputs.loss
        loss.backward()
        optimizer.step()
        lr_scheduler.step()
        optimizer.zero_grad()
        completed_steps += 1
        print(f"step {completed_steps}: loss {loss.item():.4f} lr {lr_scheduler.get_last_lr()[0]:.2e}")
        if completed_steps >= args.max_train_steps:
            break


if __name__ == "__main__":
    main()
