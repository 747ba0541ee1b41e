import random

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset
from transformers import DistilBertConfig, DistilBertForSequenceClassification

SEED = 42
MAX_LEN = 256
BATCH_SIZE = 64
EPOCHS = 1
LR = 5e-5


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


class IMDbEncoded(Dataset):
    def __init__(self, n):
        self.ids = torch.randint(1000, 30522, (n, MAX_LEN))
        self.mask = torch.ones(n, MAX_LEN, dtype=torch.long)
        self.y = torch.randint(0, 2, (n,))

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.ids[i], self.mask[i], self.y[i]


def train_one_epoch(model, loader, optimizer, scheduler, device):
    model.train()
    losses = []
    for step, (ids, mask, y) in enumerate(loader):
        ids, mask, y = ids.to(device), mask.to(device), y.to(device)
        out = model(input_ids=ids, attention_mask=mask, labels=y)
        out.loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
        losses.append(out.loss.item())
        print(f"  step {step} loss {losses[-1]:.4f}")
    return float(np.mean(losses))


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    preds, gold = [], []
    for ids, mask, y in loader:
        logits = model(input_ids=ids.to(device), attention_mask=mask.to(device)).logits
        preds.append(logits.argmax(-1).cpu())
        gold.append(y)
    preds, gold = torch.cat(preds), torch.cat(gold)
    return (preds == gold).float().mean().item()


def main():
    set_seed(SEED)
    device = torch.device("cuda")
    config = DistilBertConfig(num_labels=2, seq_classif_dropout=0.2)
    model = DistilBertForSequenceClassification(config)
    model.to(device)

    train_loader = DataLoader(IMDbEncoded(BATCH_SIZE * 5), batch_size=BATCH_SIZE, shuffle=True)
    test_loader = DataLoader(IMDbEncoded(BATCH_SIZE * 2), batch_size=BATCH_SIZE)

    optimizer = torch.optim.AdamW(model.parameters(), lr=LR)
    total_steps = EPOCHS * len(train_loader)
    scheduler = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=1.0, end_factor=0.0,
                                                  total_iters=total_steps)
    for epoch in range(EPOCHS):
        print(f"epoch {epoch + 1}/{EPOCHS}")
        train_loss = train_one_epoch(model, train_loader, optimizer, scheduler, device)
        acc = evaluate(model, test_loader, device)
        print(f"train loss {train_loss:.4f} | test acc {acc:.3f}")


if __name__ == "__main__":
    main()
