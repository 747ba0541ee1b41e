"""Fine-tune bert-base-uncased for 5-way review rating classification.

Texts arrive already tokenized (ids) with variable lengths; the collate function does what
`tokenizer(..., padding="max_length", truncation=True, max_length=...)` would do.
"""
import random
from dataclasses import dataclass, field
from typing import List

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from transformers import BertForSequenceClassification, HfArgumentParser


@dataclass
class Args:
    model_name_or_path: str = field(default="bert-base-uncased")
    num_labels: int = 5
    max_length: int = field(default=192, metadata={"help": "pad / truncate every review to this many tokens"})
    per_device_batch_size: int = 64
    learning_rate: float = 3e-5
    weight_decay: float = 0.01
    num_train_steps: int = 4
    eval_batches: int = 2
    bf16: bool = True
    seed: int = 42


CLS_ID, SEP_ID, PAD_ID = 101, 102, 0


class ReviewIds(Dataset):
    def __init__(self, n, num_labels, vocab_size=30522, min_len=40, max_len=400, seed=0):
        rng = random.Random(seed)
        self.samples = []
        for _ in range(n):
            length = rng.randint(min_len, max_len)
            ids = [rng.randrange(1000, vocab_size) for _ in range(length)]
            self.samples.append((ids, rng.randrange(num_labels)))

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, i):
        return self.samples[i]


class PadToMaxLength:
    def __init__(self, max_length):
        self.max_length = max_length

    def __call__(self, batch):
        input_ids: List[List[int]] = []
        masks, labels = [], []
        for ids, label in batch:
            ids = [CLS_ID] + ids[: self.max_length - 2] + [SEP_ID]
            pad = self.max_length - len(ids)
            masks.append([1] * len(ids) + [0] * pad)
            input_ids.append(ids + [PAD_ID] * pad)
            labels.append(label)
        input_ids = torch.tensor(input_ids, dtype=torch.long)
        return {
            "input_ids": input_ids,
            "attention_mask": torch.tensor(masks, dtype=torch.long),
            "token_type_ids": torch.zeros_like(input_ids),
            "labels": torch.tensor(labels, dtype=torch.long),
        }


def grouped_params(model, wd):
    no_decay = ("bias", "LayerNorm.weight")
    return [
        {"params": [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)],
         "weight_decay": wd},
        {"params": [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)],
         "weight_decay": 0.0},
    ]


@torch.no_grad()
def evaluate(model, loader, args):
    model.eval()
    correct = total = 0
    for i, batch in enumerate(loader):
        if i == args.eval_batches:
            break
        batch = {k: v.cuda() for k, v in batch.items()}
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=args.bf16):
            logits = model(**batch).logits
        correct += (logits.argmax(-1) == batch["labels"]).sum().item()
        total += batch["labels"].numel()
    model.train()
    return correct / max(total, 1)


def main():
    (args,) = HfArgumentParser(Args).parse_args_into_dataclasses()
    torch.manual_seed(args.seed)

    collate = PadToMaxLength(args.max_length)
    train_ds = ReviewIds(args.per_device_batch_size * args.num_train_steps, args.num_labels, seed=0)
    eval_ds = ReviewIds(args.per_device_batch_size * args.eval_batches, args.num_labels, seed=1)
    train_dl = DataLoader(train_ds, batch_size=args.per_device_batch_size, shuffle=True, collate_fn=collate)
    eval_dl = DataLoader(eval_ds, batch_size=args.per_device_batch_size, collate_fn=collate)

    model = BertForSequenceClassification.from_pretrained(args.model_name_or_path, num_labels=args.num_labels)
    model.cuda().train()

    optim = torch.optim.Adam(grouped_params(model, args.weight_decay), lr=args.learning_rate, eps=1e-6)
    sched = torch.optim.lr_scheduler.LinearLR(optim, start_factor=1.0, end_factor=0.0,
                                              total_iters=args.num_train_steps)

    for step, batch in enumerate(train_dl):
        batch = {k: v.cuda(non_blocking=True) for k, v in batch.items()}
        labels = batch.pop("labels")
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=args.bf16):
            logits = model(**batch).logits
        loss = F.cross_entropy(logits.float(), labels, label_smoothing=0.1)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        optim.step()
        sched.step()
        optim.zero_grad()
        print(f"step {step + 1}/{args.num_train_steps} loss={loss.item():.4f}")
        if step + 1 >= args.num_train_steps:
            break

    print(f"eval acc: {evaluate(model, eval_dl, args):.3f}")


if __name__ == "__main__":
    main()
