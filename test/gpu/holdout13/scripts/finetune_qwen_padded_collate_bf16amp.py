"""Instruction-tune Qwen2.5-0.5B on variable-length examples.

Each batch is padded to its own longest example by `pad_collate` (no fixed max_length), prompt/pad positions
get label -100. Weights in fp32, bf16 autocast, gradient accumulation by hand.
"""
import math
import random

import torch
from torch.utils.data import DataLoader, Dataset
from transformers import AutoModelForCausalLM, get_cosine_schedule_with_warmup

MODEL_NAME = "Qwen/Qwen2.5-0.5B"
PAD_ID = 151643            # <|endoftext|>
VOCAB = 151_000
MIN_LEN, MAX_LEN = 128, 512
MICRO_BS = 8
ACCUM = 2
OPT_STEPS = 4
LR = 2e-5


class SyntheticSFT(Dataset):
    def __init__(self, n, seed=0):
        rng = random.Random(seed)
        self.items = []
        for _ in range(n):
            L = rng.randint(MIN_LEN, MAX_LEN)
            prompt_len = rng.randint(16, L // 2)
            self.items.append((L, prompt_len))

    def __len__(self):
        return len(self.items)

    def __getitem__(self, idx):
        L, prompt_len = self.items[idx]
        ids = torch.randint(0, VOCAB, (L,))
        labels = ids.clone()
        labels[:prompt_len] = -100
        return {"input_ids": ids, "labels": labels}


def pad_collate(batch):
    longest = max(x["input_ids"].size(0) for x in batch)
    input_ids = torch.full((len(batch), longest), PAD_ID, dtype=torch.long)
    labels = torch.full((len(batch), longest), -100, dtype=torch.long)
    attention_mask = torch.zeros((len(batch), longest), dtype=torch.long)
    for i, x in enumerate(batch):
        n = x["input_ids"].size(0)
        input_ids[i, :n] = x["input_ids"]
        labels[i, :n] = x["labels"]
        attention_mask[i, :n] = 1
    return {"input_ids": input_ids, "labels": labels, "attention_mask": attention_mask}


def main():
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(MODEL_NAME, dtype=torch.float32)
    model.config.pad_token_id = PAD_ID
    model.to("cuda")
    model.train()

    ds = SyntheticSFT(MICRO_BS * ACCUM * OPT_STEPS)
    loader = DataLoader(ds, batch_size=MICRO_BS, shuffle=True, collate_fn=pad_collate, num_workers=2)

    no_decay = ("bias", "norm")
    groups = [
        {"params": [p for n, p in model.named_parameters() if not any(k in n for k in no_decay)], "weight_decay": 0.1},
        {"params": [p for n, p in model.named_parameters() if any(k in n for k in no_decay)], "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(groups, lr=LR, betas=(0.9, 0.95), fused=True)
    total = math.ceil(len(loader) / ACCUM)
    scheduler = get_cosine_schedule_with_warmup(optimizer, num_warmup_steps=1, num_training_steps=total)

    opt_step = 0
    for i, batch in enumerate(loader):
        batch = {k: v.cuda(non_blocking=True) for k, v in batch.items()}
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model(**batch)
        loss = out.loss / ACCUM
        loss.backward()
        if (i + 1) % ACCUM == 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            opt_step += 1
            print(f"opt step {opt_step} loss {out.loss.item():.3f} padded len {batch['input_ids'].shape[1]}")
    print(f"max allocated {torch.cuda.max_memory_allocated() / 1e9:.2f} GB")


if __name__ == "__main__":
    main()
