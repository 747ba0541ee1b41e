"""Extractive question answering (SQuAD-style) with bert-base-uncased: start/end logits, a hand-written
training loop with bf16 autocast and linear warmup, and an evaluation pass that keeps the logits (on the CPU)
for span decoding."""
import argparse

import torch
from torch.utils.data import DataLoader, Dataset
from transformers import AutoModelForQuestionAnswering, get_linear_schedule_with_warmup


def parse_args():
    p = argparse.ArgumentParser(description="Finetune a transformers model on a question answering task")
    p.add_argument("--model_name_or_path", type=str, default="bert-base-uncased")
    p.add_argument("--max_seq_length", type=int, default=384)
    p.add_argument("--doc_stride", type=int, default=128)
    p.add_argument("--per_device_train_batch_size", type=int, default=32)
    p.add_argument("--per_device_eval_batch_size", type=int, default=128)
    p.add_argument("--learning_rate", type=float, default=3e-5)
    p.add_argument("--weight_decay", type=float, default=0.01)
    p.add_argument("--num_warmup_steps", type=int, default=2)
    p.add_argument("--max_train_steps", type=int, default=8)
    p.add_argument("--n_best_size", type=int, default=20)
    p.add_argument("--max_answer_length", type=int, default=30)
    return p.parse_args()


class FeaturesDataset(Dataset):
    """Already-tokenised features: [CLS] question [SEP] context [SEP] + answer span."""

    def __init__(self, n, seq_len, vocab=30522):
        self.n, self.seq_len, self.vocab = n, seq_len, vocab

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        q_len = torch.randint(8, 48, ()).item()
        ids = torch.randint(1000, self.vocab, (self.seq_len,))
        ids[0], ids[q_len + 1], ids[-1] = 101, 102, 102
        token_type = torch.zeros(self.seq_len, dtype=torch.long)
        token_type[q_len + 2:] = 1
        start = torch.randint(q_len + 2, self.seq_len - 40, ()).item()
        end = start + torch.randint(0, 30, ()).item()
        return {"input_ids": ids, "token_type_ids": token_type, "attention_mask": torch.ones_like(ids),
                "start_positions": torch.tensor(start), "end_positions": torch.tensor(end)}


def main():
    args = parse_args()
    device = torch.device("cuda")
    model = AutoModelForQuestionAnswering.from_pretrained(args.model_name_or_path).to(device)

    no_decay = ["bias", "LayerNorm.weight"]
    grouped = [
        {"params": [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)],
         "weight_decay": args.weight_decay},
        {"params": [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)], "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(grouped, lr=args.learning_rate)
    lr_scheduler = get_linear_schedule_with_warmup(optimizer, args.num_warmup_steps, args.max_train_steps)

    train_dl = DataLoader(FeaturesDataset(args.per_device_train_batch_size * args.max_train_steps,
                                          args.max_seq_length),
                          batch_size=args.per_device_train_batch_size, shuffle=True)
    eval_dl = DataLoader(FeaturesDataset(args.per_device_eval_batch_size * 3, args.max_seq_length),
                         batch_size=args.per_device_eval_batch_size)

    model.train()
    completed_steps = 0
    for batch in train_dl:
        batch = {k: v.to(device) for k, v in batch.items()}
        with torch.autocast("cuda", dtype=torch.bfloat16):
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

    model.eval()
    all_start_logits, all_end_logits = [], []
    for batch in eval_dl:
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
            outputs = model(input_ids=batch["input_ids"].to(device),
                            token_type_ids=batch["token_type_ids"].to(device),
                            attention_mask=batch["attention_mask"].to(device))
        all_start_logits.append(outputs.start_logits.float().cpu())
        all_end_logits.append(outputs.end_logits.float().cpu())
    start_logits = torch.cat(all_start_logits)
    end_logits = torch.cat(all_end_logits)
    best_start = start_logits.topk(args.n_best_size, dim=1).indices
    print("eval features:", start_logits.shape[0], "n-best shape", tuple(best_start.shape))
    print("peak GiB", torch.cuda.max_memory_allocated() / 2**30)


if __name__ == "__main__":
    main()
