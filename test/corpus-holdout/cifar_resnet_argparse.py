"""Train a ResNet-18 on CIFAR-10 with cosine LR and label smoothing.

Usage:
    python cifar_resnet_argparse.py --epochs 200 --lr 0.1 --bs 128 --out runs/r18
"""
import argparse
import json
import os
import time

os.environ["CUDA_VISIBLE_DEVICES"] = "0"  # expect: OOM105

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
import torchvision.transforms as T

DEFAULTS = {
    "epochs": 200,
    "lr": 0.1,
    "bs": 128,
    "wd": 5e-4,
    "momentum": 0.9,
    "label_smoothing": 0.1,
    "workers": 4,
}


def parse_args():
    p = argparse.ArgumentParser()
    for k, v in DEFAULTS.items():
        p.add_argument(f"--{k}", type=type(v), default=v)
    p.add_argument("--out", default="runs/default")
    p.add_argument("--data", default="./data")
    return p.parse_args()


def get_loaders(args):
    mean, std = (0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616)
    train_tf = T.Compose([T.RandomCrop(32, padding=4), T.RandomHorizontalFlip(), T.ToTensor(), T.Normalize(mean, std)])
    test_tf = T.Compose([T.ToTensor(), T.Normalize(mean, std)])
    train_set = torchvision.datasets.CIFAR10(args.data, train=True, download=True, transform=train_tf)
    test_set = torchvision.datasets.CIFAR10(args.data, train=False, download=True, transform=test_tf)
    train_loader = torch.utils.data.DataLoader(train_set, batch_size=args.bs, shuffle=True,
                                               num_workers=args.workers, pin_memory=True, drop_last=True)
    test_loader = torch.utils.data.DataLoader(test_set, batch_size=256, shuffle=False,
                                              num_workers=args.workers, pin_memory=True)
    return train_loader, test_loader


def build_model():
    model = torchvision.models.resnet18(num_classes=10)
    # CIFAR stem: 3x3 conv, no maxpool
    model.conv1 = nn.Conv2d(3, 64, kernel_size=3, stride=1, padding=1, bias=False)
    model.maxpool = nn.Identity()
    return model


def train_one_epoch(model, loader, criterion, optimizer, device):
    model.train()
    running_loss, correct, seen = 0.0, 0, 0
    for x, y in loader:
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        optimizer.zero_grad(set_to_none=True)
        logits = model(x)
        loss = criterion(logits, y)
        loss.backward()
        optimizer.step()

        running_loss += loss * x.size(0)  # expect: OOM102
        correct += (logits.argmax(dim=1) == y).sum().item()
        seen += x.size(0)
    return running_loss.item() / seen, correct / seen


def validate(model, loader, criterion, device):
    model.eval()
    val_loss, correct, n = 0.0, 0, 0
    for x, y in loader:
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        logits = model(x)  # expect: OOM104
        val_loss += criterion(logits, y).item() * x.size(0)
        correct += (logits.argmax(1) == y).sum().item()
        n += x.size(0)
    return val_loss / n, correct / n


def main():
    args = parse_args()
    os.makedirs(args.out, exist_ok=True)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_loader, test_loader = get_loaders(args)
    model = build_model().to(device)
    criterion = nn.CrossEntropyLoss(label_smoothing=args.label_smoothing)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum,
                                weight_decay=args.wd, nesterov=True)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)

    log = []
    best_acc = 0.0
    for epoch in range(args.epochs):
        t0 = time.time()
        tr_loss, tr_acc = train_one_epoch(model, train_loader, criterion, optimizer, device)
        va_loss, va_acc = validate(model, test_loader, criterion, device)
        scheduler.step()
        log.append({"epoch": epoch, "train_loss": tr_loss, "train_acc": tr_acc,
                    "val_loss": va_loss, "val_acc": va_acc, "time": time.time() - t0})
        print(json.dumps(log[-1]))
        if va_acc > best_acc:
            best_acc = va_acc
            torch.save({"model": model.state_dict(), "epoch": epoch, "acc": va_acc},
                       os.path.join(args.out, "best.pt"))
    with open(os.path.join(args.out, "log.json"), "w") as f:
        json.dump(log, f, indent=1)


if __name__ == "__main__":
    main()
