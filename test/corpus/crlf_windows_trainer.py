"""Leaf disease classifier - written on the Windows workstation (CRLF line endings).

Run:  python crlf_windows_trainer.py --data D:\\datasets\\plant_village
"""
import argparse
import os

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, random_split
from torchvision import datasets, models, transforms


def build_loaders(root, batch_size):
    tf = transforms.Compose([
        transforms.Resize((224, 224)),
        transforms.ToTensor(),
        transforms.Normalize([0.5, 0.5, 0.5], [0.5, 0.5, 0.5]),
    ])
    full = datasets.ImageFolder(root, transform=tf)
    n_val = len(full) // 10
    train_set, val_set = random_split(full, [len(full) - n_val, n_val],
                                      generator=torch.Generator().manual_seed(0))
    return (DataLoader(train_set, batch_size=batch_size, shuffle=True, num_workers=0),
            DataLoader(val_set, batch_size=batch_size, num_workers=0),
            len(full.classes))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--bs", type=int, default=32)
    args = ap.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_dl, val_dl, n_classes = build_loaders(args.data, args.bs)

    model = models.mobilenet_v3_large(weights="DEFAULT")
    model.classifier[3] = nn.Linear(model.classifier[3].in_features, n_classes)
    model = model.to(device)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=1e-3,
                                                    total_steps=args.epochs * len(train_dl))

    for epoch in range(args.epochs):
        model.train()
        running = 0.0
        optimizer.zero_grad()
        for x, y in train_dl:
            x, y = x.to(device), y.to(device)
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()  # expect: OOM103
            scheduler.step()
            running += loss.item()
        print(f"epoch {epoch} train loss {running / len(train_dl):.4f}")

        model.eval()
        val_loss = 0.0
        correct = 0
        for x, y in val_dl:
            x, y = x.to(device), y.to(device)
            logits = model(x)  # expect: OOM104
            val_loss += criterion(logits, y)  # expect: OOM102
            correct += (logits.argmax(1) == y).sum().item()
        print(f"epoch {epoch} val loss {val_loss.item() / len(val_dl):.4f} "
              f"acc {correct / len(val_dl.dataset):.3f}")

    os.makedirs("checkpoints", exist_ok=True)
    torch.save(model.state_dict(), os.path.join("checkpoints", "leaf_mnv3.pt"))


if __name__ == "__main__":
    main()
