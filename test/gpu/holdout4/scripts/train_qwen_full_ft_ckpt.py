"""Full fine-tuning (all weights) of Qwen2.5-0.5B for instruction following, written without the HF Trainer.

Weights are loaded as stored on the hub (no dtype argument), gradient checkpointing is enabled through the
HF API, prompt tokens are masked with -100 in `labels`, AdamW(fused=True)."""
import argparse

import torch
from torch.utils.data import DataLoader, Dataset
from transformers import AutoModelForCausalLM, get_linear_schedule_with_warmup


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_name_or_path", type=str, default="Qwen/Qwen2.5-0.5B")
    parser.add_argument("--per_device_train_batch_size", type=int, default=8)
    parser.add_argument("--max_length", type=int, default=1024)
    parser.add_argument("--learning_rate", type=float, default=1e-5)
    parser.add_argument("--weight_decay", type=float, default=0.0)
    parser.add_argument("--max_train_steps", type=int, default=3)
    parser.add_argument("--num_warmup_steps", type=int, default=1)
    parser.add_argument("--gradient_checkpointing", action="store_true", default=True)
    return parser.parse_args()


class SyntheticSFT(Dataset):
    def __init__(self, n, max_length, vocab=151643):
        self.n, self.max_length, self.vocab = n, max_length, vocab

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        ids = torch.randint(0, self.vocab, (self.max_length,))
        prompt_len = int(torch.randint(64, self.max_length // 2, ()))
        labels = ids.clone()
        labels[:prompt_len] = -100
        return {"input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": labels}


def main():
    args = parse_args()
    model = AutoModelForCausalLM.from_pretrained(args.model_name_or_path)
    if args.gradient_checkpointing:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        model.config.use_cache = False
    model.to("cuda")
    model.train()
    print("loaded in", model.dtype)

    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate, weight_decay=args.weight_decay,
                                  fused=True)
    lr_scheduler = get_linear_schedule_with_warmup(optimizer, args.num_warmup_steps, args.max_train_steps)
    train_dataloader = DataLoader(SyntheticSFT(args.per_device_train_batch_size * args.max_train_steps,
                                               args.max_length),
                                  batch_size=args.per_device_train_batch_size, shuffle=True)
    completed_steps = 0
    for batch in train_dataloader:
        batch = {k: v.to("cuda") for k, v in batch.items()}
        outputs = model(**batch)
        loss = outputs.loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        lr_scheduler.step()
        optimizer.zero_grad()
        completed_steps += 1
        print(f"step {completed_steps} loss {loss.item():.4f}")
        if completed_steps >= args.max_train_steps:
            break
    print(f"peak allocated {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
