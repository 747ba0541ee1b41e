"""SWAG-style multiple choice with bert-base-uncased (4 endings per context), fp16 autocast.

Each example is a context with NUM_CHOICES candidate endings; the model scores every (context, ending) pair and
the loss is a softmax over the choices. A toy tokenizer pads each pair to max_length.
"""
import random

import torch
from torch.utils.data import DataLoader, Dataset
from transformers import AutoModelForMultipleChoice, get_linear_schedule_with_warmup


class Args:
    model_name_or_path = "bert-base-uncased"
    num_choices = 4
    max_length = 256               # tokenizer padding length (the model itself accepts 512 positions)
    per_device_train_batch_size = 16
    per_device_eval_batch_size = 32
    learning_rate = 3e-5
    num_train_steps = 6
    warmup_steps = 1
    max_grad_norm = 1.0
    seed = 13


class ToyTokenizer:
    """Mimics tokenizer(first, second, truncation=True, max_length=..., padding="max_length")."""

    cls_id, sep_id, pad_id = 101, 102, 0

    def __init__(self, vocab_size=30522, max_length=128):
        self.vocab_size = vocab_size
        self.max_length = max_length

    def __call__(self, first_len, second_len):
        first = [random.randrange(1000, self.vocab_size) for _ in range(first_len)]
        second = [random.randrange(1000, self.vocab_size) for _ in range(second_len)]
        budget = self.max_length - 3
        while len(first) + len(second) > budget:
            if len(first) > len(second):
                first.pop()
            else:
                second.pop()
        ids = [self.cls_id] + first + [self.sep_id] + second + [self.sep_id]
        types = [0] * (len(first) + 2) + [1] * (len(second) + 1)
        mask = [1] * len(ids)
        pad = self.max_length - len(ids)
        return ids + [self.pad_id] * pad, types + [0] * pad, mask + [0] * pad


class SwagLike(Dataset):
    def __init__(self, n, tokenizer, num_choices):
        self.examples = []
        for _ in range(n):
            ctx_len = random.randint(60, 200)
            enc = [tokenizer(ctx_len, random.randint(20, 80)) for _ in range(num_choices)]
            self.examples.append({
                "input_ids": torch.tensor([e[0] for e in enc]),
                "token_type_ids": torch.tensor([e[1] for e in enc]),
                "attention_mask": torch.tensor([e[2] for e in enc]),
                "labels": torch.tensor(random.randrange(num_choices)),
            })

    def __len__(self):
        return len(self.examples)

    def __getitem__(self, i):
        return self.examples[i]


def evaluate(model, loader, device):
    model.eval()
    preds, refs = [], []
    with torch.no_grad():
        for batch in loader:
            batch = {k: v.to(device) for k, v in batch.items()}
            with torch.autocast("cuda", dtype=torch.float16):
                logits = model(**batch).logits          # (batch, num_choices)
            preds.append(logits.argmax(-1).cpu())
            refs.append(batch["labels"].cpu())
    preds, refs = torch.cat(preds), torch.cat(refs)
    return (preds == refs).float().mean().item()


def main(args=Args()):
    random.seed(args.seed)
    torch.manual_seed(args.seed)
    device = torch.device("cuda")

    tok = ToyTokenizer(max_length=args.max_length)
    train_ds = SwagLike(args.per_device_train_batch_size * args.num_train_steps, tok, args.num_choices)
    eval_ds = SwagLike(args.per_device_eval_batch_size * 2, tok, args.num_choices)
    train_loader = DataLoader(train_ds, batch_size=args.per_device_train_batch_size, shuffle=True)
    eval_loader = DataLoader(eval_ds, batch_size=args.per_device_eval_batch_size)

    model = AutoModelForMultipleChoice.from_pretrained(args.model_name_or_path)
    model.to(device)

    no_decay = ["bias", "LayerNorm.weight"]
    grouped = [
        {"params": [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)],
         "weight_decay": 0.01},
        {"params": [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)],
         "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(grouped, lr=args.learning_rate)
    scheduler = get_linear_schedule_with_warmup(optimizer, args.warmup_steps, args.num_train_steps)
    scaler = torch.amp.GradScaler("cuda")

    model.train()
    completed = 0
    for batch in train_loader:
        batch = {k: v.to(device) for k, v in batch.items()}
        with torch.autocast("cuda", dtype=torch.float16):
            outputs = model(**batch)
        loss = outputs.loss
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
        scaler.step(optimizer)
        scaler.update()
        scheduler.step()
        optimizer.zero_grad(set_to_none=True)
        completed += 1
        print(f"step {completed} loss {loss.item():.4f} scale {scaler.get_scale():.0f}")
        if completed >= args.num_train_steps:
            break

    acc = evaluate(model, eval_loader, device)
    print(f"eval accuracy {acc:.3f}")
    print(f"max allocated {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
