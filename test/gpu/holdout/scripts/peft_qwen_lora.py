"""LoRA on Qwen2.5-0.5B (all linear projections), plain PyTorch loop.

No dtype is passed to from_pretrained: with transformers 5 the weights come in the checkpoint's dtype.
"""
import argparse
import time

import torch
from peft import LoraConfig, get_peft_model
from torch.utils.data import DataLoader, Dataset
from transformers import AutoModelForCausalLM


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model_name_or_path", default="Qwen/Qwen2.5-0.5B")
    ap.add_argument("--per_device_train_batch_size", type=int, default=8)
    ap.add_argument("--max_seq_length", type=int, default=512)
    ap.add_argument("--learning_rate", type=float, default=1e-4)
    ap.add_argument("--lora_r", type=int, default=16)
    ap.add_argument("--lora_alpha", type=int, default=32)
    ap.add_argument("--max_train_steps", type=int, default=5)
    return ap.parse_args()


class SFTData(Dataset):
    def __init__(self, n, seq_len, vocab=151936, prompt_frac=0.3):
        self.ids = torch.randint(0, vocab - 1000, (n, seq_len))
        self.cut = int(seq_len * prompt_frac)

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        ids = self.ids[i]
        labels = ids.clone()
        labels[: self.cut] = -100   # only learn the response
        return {"input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": labels}


def main():
    args = parse_args()
    device = "cuda"

    model = AutoModelForCausalLM.from_pretrained(args.model_name_or_path)
    peft_config = LoraConfig(
        r=args.lora_r,
        lora_alpha=args.lora_alpha,
        lora_dropout=0.05,
        bias="none",
        task_type="CAUSAL_LM",
        target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
    )
    model = get_peft_model(model, peft_config)
    model.print_trainable_parameters()
    model.to(device)

    ds = SFTData(args.per_device_train_batch_size * args.max_train_steps, args.max_seq_length)
    dl = DataLoader(ds, batch_size=args.per_device_train_batch_size, shuffle=True)

    optimizer = torch.optim.AdamW(filter(lambda p: p.requires_grad, model.parameters()), lr=args.learning_rate)
    scheduler = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=1.0, end_factor=0.0,
                                                  total_iters=args.max_train_steps)

    model.train()
    completed_steps = 0
    t0 = time.time()
    for batch in dl:
        batch = {k: v.to(device) for k, v in batch.items()}
        loss = model(**batch).loss
        loss.backward()
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
        completed_steps += 1
        print(f"step {completed_steps} loss {loss.item():.4f} ({time.time() - t0:.1f}s)")
        if completed_steps >= args.max_train_steps:
            break


if __name__ == "__main__":
    main()
