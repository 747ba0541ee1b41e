"""Fine-tune GPT-2 on packed text blocks with a hand-written loop.

Settings come from the environment so the same file runs on the workstation and in the job scheduler:
    BATCH_SIZE=8 SEQ_LEN=1024 GRAD_ACCUM=4 python finetune_gpt2_env_accum_fp16.py
"""
import math
import os
import time

import torch
from torch.utils.data import DataLoader, Dataset
from transformers import AutoModelForCausalLM, get_linear_schedule_with_warmup

MODEL_NAME = os.getenv("MODEL_NAME", "gpt2")
BATCH_SIZE = int(os.getenv("BATCH_SIZE", "8"))
SEQ_LEN = int(os.getenv("SEQ_LEN", "1024"))
GRAD_ACCUM = int(os.getenv("GRAD_ACCUM", "4"))
LR = float(os.getenv("LR", "5e-5"))
MAX_UPDATES = int(os.getenv("MAX_UPDATES", "3"))
WEIGHT_DECAY = 0.01
VOCAB = 50257


class PackedBlocks(Dataset):
    """Stands in for a tokenized corpus cut into SEQ_LEN blocks."""

    def __init__(self, n_blocks, seq_len):
        self.data = torch.randint(0, VOCAB, (n_blocks, seq_len))

    def __len__(self):
        return len(self.data)

    def __getitem__(self, i):
        ids = self.data[i]
        return {"input_ids": ids, "labels": ids.clone()}


def main():
    device = "cuda"
    model = AutoModelForCausalLM.from_pretrained(MODEL_NAME)
    model.to(device)
    model.train()

    no_decay = ("bias", "ln_", "layernorm", "LayerNorm")
    groups = [
        {"params": [p for n, p in model.named_parameters() if not any(k in n for k in no_decay)],
         "weight_decay": WEIGHT_DECAY},
        {"params": [p for n, p in model.named_parameters() if any(k in n for k in no_decay)],
         "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(groups, lr=LR, betas=(0.9, 0.95))
    scheduler = get_linear_schedule_with_warmup(optimizer, num_warmup_steps=1, num_training_steps=MAX_UPDATES)
    scaler = torch.amp.GradScaler("cuda")

    ds = PackedBlocks(BATCH_SIZE * GRAD_ACCUM * MAX_UPDATES, SEQ_LEN)
    loader = DataLoader(ds, batch_size=BATCH_SIZE, shuffle=True, num_workers=2, pin_memory=True)

    updates = 0
    t0 = time.time()
    optimizer.zero_grad(set_to_none=True)
    for micro_step, batch in enumerate(loader):
        batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}
        with torch.autocast(device_type="cuda", dtype=torch.float16):
            out = model(**batch)
            loss = out.loss / GRAD_ACCUM
        scaler.scale(loss).backward()

        if (micro_step + 1) % GRAD_ACCUM == 0:
            scaler.unscale_(optimizer)
            gnorm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            updates += 1
            ppl = math.exp(min(20.0, loss.item() * GRAD_ACCUM))
            print(f"update {updates} loss {loss.item() * GRAD_ACCUM:.3f} ppl {ppl:.1f} "
                  f"gnorm {gnorm:.2f} scale {scaler.get_scale():.0f}")
            if updates >= MAX_UPDATES:
                break
    print(f"done in {time.time() - t0:.1f}s, peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
