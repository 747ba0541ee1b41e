"""Distil an ensemble of two fine-tuned teachers into a small student (SST-2).

Both teachers are frozen; gradients only flow into the student.
"""
import argparse

import torch
import torch.nn.functional as F
from datasets import load_dataset
from torch.utils.data import DataLoader
from transformers import (
    AutoModelForSequenceClassification,
    AutoTokenizer,
    DataCollatorWithPadding,
    get_linear_schedule_with_warmup,
)

parser = argparse.ArgumentParser()
parser.add_argument("--teacher_a", default="textattack/bert-base-uncased-SST-2")
parser.add_argument("--teacher_b", default="checkpoints/bert-large-uncased-sst2")
parser.add_argument("--student", default="google/bert_uncased_L-4_H-256_A-4")
parser.add_argument("--epochs", type=int, default=3)
parser.add_argument("--batch_size", type=int, default=64)
parser.add_argument("--lr", type=float, default=5e-5)
parser.add_argument("--temperature", type=float, default=2.0)
args = parser.parse_args()

device = "cuda"
tok = AutoTokenizer.from_pretrained(args.student)

teacher_a = AutoModelForSequenceClassification.from_pretrained(args.teacher_a).to(device)
teacher_a.requires_grad_(False)
teacher_a.eval()

teacher_b = AutoModelForSequenceClassification.from_pretrained(args.teacher_b).to(device)
for p in teacher_b.parameters():
    p.requires_grad = False
teacher_b.eval()

student = AutoModelForSequenceClassification.from_pretrained(args.student, num_labels=2).to(device)


def reset_grads(*models):
    for m in models:
        for p in m.parameters():
            p.grad = None


@torch.inference_mode()
def evaluate(model, loader):
    model.eval()
    correct = total = 0
    for batch in loader:
        batch = {k: v.to(device) for k, v in batch.items()}
        logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
        correct += (logits.argmax(-1) == batch["labels"]).sum().item()
        total += batch["labels"].numel()
    model.train()
    return correct / total


raw = load_dataset("stanfordnlp/sst2")
enc = raw.map(lambda ex: tok(ex["sentence"], truncation=True, max_length=128), batched=True)
enc = enc.rename_column("label", "labels").remove_columns(["sentence", "idx"])
collate = DataCollatorWithPadding(tok)
train_loader = DataLoader(enc["train"], batch_size=args.batch_size, shuffle=True, collate_fn=collate, num_workers=2)
val_loader = DataLoader(enc["validation"], batch_size=256, collate_fn=collate)

optimizer = torch.optim.AdamW(student.parameters(), lr=args.lr, weight_decay=0.01)
total_steps = args.epochs * len(train_loader)
scheduler = get_linear_schedule_with_warmup(optimizer, int(0.06 * total_steps), total_steps)

T = args.temperature
step = 0
for epoch in range(args.epochs):
    student.train()
    for batch in train_loader:
        batch = {k: v.to(device) for k, v in batch.items()}
        inputs = {"input_ids": batch["input_ids"], "attention_mask": batch["attention_mask"]}
        s_logits = student(**inputs).logits
        # the teachers are frozen above, so no graph is recorded for them
        t_logits = (teacher_a(**inputs).logits + teacher_b(**inputs).logits) / 2
        loss_kd = F.kl_div(F.log_softmax(s_logits / T, -1), F.softmax(t_logits / T, -1), reduction="batchmean") * T ** 2
        loss_ce = F.cross_entropy(s_logits, batch["labels"])
        loss = 0.5 * loss_kd + 0.5 * loss_ce

        reset_grads(student)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(student.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        step += 1
        if step % 200 == 0:
            print(f"step {step}: loss={loss.item():.4f} kd={loss_kd.item():.4f}")
    print(f"epoch {epoch}: val acc {evaluate(student, val_loader):.4f}")

student.save_pretrained("student-sst2")
