"""Train a BERT classifier for a few steps, then evaluate.

NOTE: the evaluation below forgets torch.no_grad() and keeps every batch's logits on the GPU
(with their autograd graph), so GPU memory grows with every eval batch.
"""
import torch
from torch.utils.data import DataLoader, Dataset
from transformers import BertConfig, BertForSequenceClassification

SEQ_LEN = 128
TRAIN_BS = 32
EVAL_BS = 64
TRAIN_STEPS = 3
EVAL_BATCHES = 5
NUM_LABELS = 2


class ReviewDataset(Dataset):
    def __init__(self, n):
        self.input_ids = torch.randint(1000, 30522, (n, SEQ_LEN))
        self.attention_mask = torch.ones(n, SEQ_LEN, dtype=torch.long)
        self.labels = torch.randint(0, NUM_LABELS, (n,))

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return {"input_ids": self.input_ids[i], "attention_mask": self.attention_mask[i], "labels": self.labels[i]}


def train(model, loader, optimizer, device):
    model.train()
    for step, batch in enumerate(loader):
        batch = {k: v.to(device) for k, v in batch.items()}
        loss = model(**batch).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        print(f"train step {step} loss {loss.item():.4f}")


def evaluate(model, loader, device):
    model.eval()
    all_logits, all_labels = [], []
    for batch in loader:
        batch = {k: v.to(device) for k, v in batch.items()}
        outputs = model(**batch)
        all_logits.append(outputs.logits)
        all_labels.append(batch["labels"])
        print(f"eval batch done, allocated {torch.cuda.memory_allocated() / 2**30:.2f} GiB")
    logits = torch.cat(all_logits)
    labels = torch.cat(all_labels)
    return (logits.argmax(-1) == labels).float().mean().item()


def main():
    device = torch.device("cuda")
    config = BertConfig(num_labels=NUM_LABELS)   # bert-base shape
    model = BertForSequenceClassification(config).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-5)

    train_loader = DataLoader(ReviewDataset(TRAIN_BS * TRAIN_STEPS), batch_size=TRAIN_BS, shuffle=True)
    eval_loader = DataLoader(ReviewDataset(EVAL_BS * EVAL_BATCHES), batch_size=EVAL_BS)

    train(model, train_loader, optimizer, device)
    acc = evaluate(model, eval_loader, device)
    print(f"accuracy {acc:.3f}")


if __name__ == "__main__":
    main()
