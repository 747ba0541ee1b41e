"""Image classification, the "functions" way: build_model(cfg) / build_loader(cfg) / train_one_epoch(...) / main().

The architecture comes from the environment (ARCH, default resnext101_32x8d), as do the batch size and the
number of classes, so the cluster launcher can sweep them without touching the file.
"""
import os
import time

import torch
import torch.nn as nn
import torchvision
from torch.utils.data import DataLoader, Dataset


def get_cfg():
    return {
        "arch": os.environ.get("ARCH", "resnext101_32x8d"),
        "batch_size": int(os.environ.get("BATCH_SIZE", "64")),
        "num_classes": int(os.environ.get("NUM_CLASSES", "1000")),
        "image_size": int(os.environ.get("IMAGE_SIZE", "224")),
        "lr": float(os.environ.get("LR", "0.1")),
        "epochs": int(os.environ.get("EPOCHS", "1")),
        "max_steps": int(os.environ.get("MAX_STEPS", "5")),
        "workers": int(os.environ.get("WORKERS", "4")),
    }


class SyntheticImageNet(Dataset):
    def __init__(self, n, size, num_classes):
        self.n, self.size, self.num_classes = n, size, num_classes

    def __len__(self):
        return self.n

    def __getitem__(self, idx):
        g = torch.Generator().manual_seed(idx)
        return torch.randn(3, self.size, self.size, generator=g), idx % self.num_classes


def build_model(cfg):
    model = torchvision.models.__dict__[cfg["arch"]](num_classes=cfg["num_classes"])
    return model.cuda()


def build_loader(cfg):
    ds = SyntheticImageNet(cfg["batch_size"] * cfg["max_steps"], cfg["image_size"], cfg["num_classes"])
    return DataLoader(ds, batch_size=cfg["batch_size"], shuffle=True, num_workers=cfg["workers"],
                      pin_memory=True, drop_last=True, persistent_workers=False)


def train_one_epoch(model, loader, criterion, optimizer, scaler, epoch, max_steps):
    model.train()
    end = time.time()
    for i, (images, target) in enumerate(loader):
        images = images.cuda(non_blocking=True)
        target = target.cuda(non_blocking=True)
        with torch.autocast("cuda", dtype=torch.float16):
            output = model(images)
            loss = criterion(output, target)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        acc1 = (output.argmax(1) == target).float().mean() * 100
        print(f"Epoch [{epoch}][{i}/{len(loader)}] loss {loss.item():.4f} acc@1 {acc1.item():.2f} "
              f"time {time.time() - end:.3f}")
        end = time.time()
        if i + 1 >= max_steps:
            break


def main():
    cfg = get_cfg()
    print(cfg)
    model = build_model(cfg)
    criterion = nn.CrossEntropyLoss().cuda()
    optimizer = torch.optim.SGD(model.parameters(), cfg["lr"], momentum=0.9, weight_decay=1e-4, nesterov=True)
    scaler = torch.amp.GradScaler("cuda")
    loader = build_loader(cfg)
    for epoch in range(cfg["epochs"]):
        train_one_epoch(model, loader, criterion, optimizer, scaler, epoch, cfg["max_steps"])


if __name__ == "__main__":
    main()
