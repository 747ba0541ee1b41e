"""BERT sequence classification: a short training run followed by an evaluation pass."""
import torch
from torch.utils.data import DataLoader, Dataset
from transformers import AutoModelForSequenceClassification

MODEL_NAME = "bert-base-uncased"
NUM_LABELS = 4
MAX_LEN = 256
TRAIN_BS = 32
EVAL_BS = 128
LR = 2e-5
EPOCHS = 1
TRAIN_SAMPLES = TRAIN_BS * 5
EVAL_SAMPLES = EVAL_BS * 3


class FakeNewsDataset(Dataset):
    def __init__(self, n, max_len, vocab=30522):
        self.input_ids = torch.randint(1000, vocab, (n, max_len))
        self.input_ids[:, 0] = 101   # [CLS]
        self.input_ids[:, -1] = 102  # [SEP]
        self.attention_mask = torch.ones(n, max_len, dtype=torch.long)
        self.labels = torch.randint(0, NUM_LABELS, (n,))

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return {
            "input_ids": self.input_ids[i],
            "attention_mask": self.attention_mask[i],
            "labels": self.labels[i],
        }


def train_epoch(model, loader, optimizer, device):
    model.train()
    total = 0.0
    for batch in loader:
        batch = {k: v.to(device) for k, v in batch.items()}
        optimizer.zero_grad()
        out = model(**batch)
        out.loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        total += out.loss.item()
    return total / len(loader)


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    preds, golds = [], []
    for batch in loader:
        batch = {k: v.to(device) for k, v in batch.items()}
        logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
        preds.append(logits.argmax(-1).cpu())
        golds.append(batch["labels"].cpu())
    preds, golds = torch.cat(preds), torch.cat(golds)
    return (preds == golds).float().mean().item()


def main():
    device = torch.device("cuda")
    model = AutoModelForSequenceClassification.from_pretrained(MODEL_NAME, num_labels=NUM_LABELS)
    model.to(device)

    train_loader = DataLoader(FakeNewsDataset(TRAIN_SAMPLES, MAX_LEN), batch_size=TRAIN_BS, shuffle=True)
    eval_loader = DataLoader(FakeNewsDataset(EVAL_SAMPLES, MAX_LEN), batch_size=EVAL_BS)

    optimizer = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=0.01)
    for epoch in range(EPOCHS):
        loss = train_epoch(model, train_loader, optimizer, device)
        acc = evaluate(model, eval_loader, device)
        print(f"epoch {epoch}: train loss {loss:.4f}  eval acc {acc:.4f}")


if __name__ == "__main__":
    main()
