"""Train a torchvision classifier picked by name; arguments can come from an @file.

    python train_tv_getattr_argsfile_shufflenet.py @configs/shufflenet.args
    python train_tv_getattr_argsfile_shufflenet.py --arch mobilenet_v3_large --batch-size 128

With no command-line arguments the defaults file configs/shufflenet.args is used.
"""
import argparse
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from torchvision import models


def get_args():
    p = argparse.ArgumentParser(fromfile_prefix_chars="@")
    p.add_argument("--arch", default="resnet18")
    p.add_argument("--num-classes", type=int, default=1000, dest="num_classes")
    p.add_argument("--batch-size", type=int, default=64, dest="batch_size")
    p.add_argument("--img-size", type=int, default=224, dest="img_size")
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--workers", type=int, default=2)
    argv = sys.argv[1:] or ["@configs/shufflenet.args"]
    return p.parse_args(argv)


class RandomImages(Dataset):
    def __init__(self, n, img_size, num_classes):
        self.n, self.img_size, self.num_classes = n, img_size, num_classes

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        x = torch.randn(3, self.img_size, self.img_size, generator=g)
        y = torch.randint(0, self.num_classes, (1,), generator=g).item()
        return x, y


def main():
    args = get_args()
    print(vars(args))
    device = torch.device("cuda")

    model = getattr(models, args.arch)(weights=None, num_classes=args.num_classes)
    model = model.to(device)

    ds = RandomImages(args.batch_size * args.steps, args.img_size, args.num_classes)
    loader = DataLoader(ds, batch_size=args.batch_size, shuffle=True, num_workers=args.workers,
                        pin_memory=True, drop_last=True)

    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, nesterov=True, weight_decay=4e-5)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=args.lr, total_steps=len(loader))
    scaler = torch.amp.GradScaler("cuda")
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)

    model.train()
    t0 = time.time()
    for step, (images, targets) in enumerate(loader):
        images = images.to(device, non_blocking=True)
        targets = targets.to(device, non_blocking=True)
        with torch.autocast("cuda", dtype=torch.float16):
            logits = model(images)
            loss = criterion(logits, targets)
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        scheduler.step()
        acc = (logits.argmax(1) == targets).float().mean().item()
        print(f"step {step} loss {loss.item():.4f} acc {acc:.3f} scale {scaler.get_scale():.0f}")
    print(f"done in {time.time() - t0:.1f}s, max mem {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
