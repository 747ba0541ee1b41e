import argparse

import torch
from datasets import load_dataset
from torch.utils.data import DataLoader
from transformers import AutoModelForSequenceClassification, AutoTokenizer, get_cosine_schedule_with_warmup

parser = argparse.ArgumentParser()
parser.add_argument("--model", default="distilbert-base-uncased")
parser.add_argument("--batch_size", type=int, default=32)
parser.add_argument("--workers", type=int, default=4)
parser.add_argument("--epochs", type=int, default=2)
parser.add_argument("--lr", type=float, default=3e-5)
parser.add_argument("--max_len", type=int, default=256, dest="max_len")
args = parser.parse_args()

tokenizer = AutoTokenizer.from_pretrained(args.model)
ds = load_dataset("stanfordnlp/imdb")


def collate(batch):
    texts = [b["text"] for b in batch]
    enc = tokenizer(texts, padding=True, truncation=True, max_length=args.max_len, return_tensors="pt")
    enc["labels"] = torch.tensor([b["label"] for b in batch])
    return {k: v.to("cuda") for k, v in enc.items()}  # expect: OOM112


train_loader = DataLoader(ds["train"], batch_size=args.batch_size, shuffle=True, collate_fn=collate,
                          num_workers=args.workers)
test_loader = DataLoader(ds["test"], batch_size=128, collate_fn=collate, num_workers=args.workers)

model = AutoModelForSequenceClassification.from_pretrained(args.model, num_labels=2).cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
num_steps = args.epochs * len(train_loader)
scheduler = get_cosine_schedule_with_warmup(optimizer, num_warmup_steps=num_steps // 10, num_training_steps=num_steps)


def evaluate():
    model.eval()
    correct = 0
    with torch.no_grad():
        for batch in test_loader:
            logits = model(**batch).logits
            correct += (logits.argmax(-1) == batch["labels"]).sum().item()
    model.train()
    return correct / len(ds["test"])


for epoch in range(args.epochs):
    model.train()
    for step, batch in enumerate(train_loader):
        outputs = model(**batch)
        outputs.loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
        if step % 100 == 0:
            print(f"epoch {epoch} step {step} loss {outputs.loss.item():.4f}")
    print(f"epoch {epoch}: test acc {evaluate():.4f}")
