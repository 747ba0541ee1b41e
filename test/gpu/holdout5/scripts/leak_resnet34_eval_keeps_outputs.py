"""ResNet-34 on a 10-class problem: train, then validate.

DELIBERATE LEAKS (this script is a test case for memory tooling, keep them):
  1. train(): `losses.append(loss)` keeps every step's loss tensor (with its autograd history) instead of
     `loss.item()`; over NUM_TRAIN_BATCHES = 12 steps.
  2. validate(): runs WITHOUT torch.no_grad() and keeps each batch's `outputs` in a list for the metric, without
     `.detach()`, so the whole forward graph of every validation batch stays alive until the metric is computed;
     over NUM_VAL_BATCHES = 5 batches of 128.
"""
import torch
import torch.nn as nn
import torchvision
from torch.utils.data import DataLoader, Dataset

IMG = 160
TRAIN_BS = 64
VAL_BS = 128
NUM_TRAIN_BATCHES = 12
NUM_VAL_BATCHES = 5
NUM_CLASSES = 10


class Synthetic(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.randn(3, IMG, IMG), i % NUM_CLASSES


def train(model, loader, optimizer, criterion, device):
    model.train()
    losses = []
    for step, (x, y) in enumerate(loader):
        x, y = x.to(device), y.to(device)
        out = model(x)
        loss = criterion(out, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss)          # leak 1: should be loss.item()
        if step + 1 == NUM_TRAIN_BATCHES:
            break
    return torch.stack(losses).mean().item()


def validate(model, loader, device):
    model.eval()
    outputs_all, targets_all = [], []
    for i, (x, y) in enumerate(loader):
        x, y = x.to(device), y.to(device)
        outputs = model(x)           # no torch.no_grad() here
        outputs_all.append(outputs)  # leak 2: keeps the graph of every batch
        targets_all.append(y)
        if i + 1 == NUM_VAL_BATCHES:
            break
    preds = torch.cat(outputs_all).argmax(1)
    return (preds == torch.cat(targets_all)).float().mean().item()


def main():
    device = torch.device("cuda")
    model = torchvision.models.resnet34(weights=None, num_classes=NUM_CLASSES).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True, weight_decay=5e-4)
    criterion = nn.CrossEntropyLoss()
    train_loader = DataLoader(Synthetic(TRAIN_BS * NUM_TRAIN_BATCHES), batch_size=TRAIN_BS, shuffle=True,
                              num_workers=4)
    val_loader = DataLoader(Synthetic(VAL_BS * NUM_VAL_BATCHES), batch_size=VAL_BS, num_workers=4)

    train_loss = train(model, train_loader, optimizer, criterion, device)
    print(f"train loss {train_loss:.4f}  allocated {torch.cuda.memory_allocated() / 2**30:.2f} GiB")
    acc = validate(model, val_loader, device)
    print(f"val acc {acc:.4f}  peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
