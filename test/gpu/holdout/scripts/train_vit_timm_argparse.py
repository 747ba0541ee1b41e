#!/usr/bin/env python
# ImageNet-100 fine-tuning with timm. Usage:
#   python train_vit_timm_argparse.py --model vit_small_patch16_224 -b 128
import argparse
import math
import time

import timm
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


def get_args():
    p = argparse.ArgumentParser(description="timm fine-tuning")
    p.add_argument("--model", default="vit_small_patch16_224", type=str, help="timm model name")
    p.add_argument("-b", "--batch-size", type=int, default=128, dest="batch_size")
    p.add_argument("--img-size", type=int, default=224, dest="img_size")
    p.add_argument("--num-classes", type=int, default=100)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--lr", type=float, default=5e-4)
    p.add_argument("--wd", type=float, default=0.05, dest="weight_decay")
    p.add_argument("--warmup-steps", type=int, default=2)
    p.add_argument("--steps-per-epoch", type=int, default=5, help="synthetic dataset length in batches")
    p.add_argument("--log-interval", type=int, default=2)
    return p.parse_args()


class RandomImages(Dataset):
    """Stand-in for the ImageNet-100 folder: random crops of the right size."""

    def __init__(self, n, img_size, num_classes):
        self.n = n
        self.img_size = img_size
        self.num_classes = num_classes

    def __len__(self):
        return self.n

    def __getitem__(self, idx):
        img = torch.randn(3, self.img_size, self.img_size)
        label = idx % self.num_classes
        return img, label


def cosine_with_warmup(step, warmup, total):
    if step < warmup:
        return (step + 1) / warmup
    progress = (step - warmup) / max(1, total - warmup)
    return 0.5 * (1.0 + math.cos(math.pi * progress))


def train_one_epoch(model, loader, optimizer, scheduler, device, epoch, args):
    model.train()
    loss_sum, n = 0.0, 0
    for it, (images, targets) in enumerate(loader):
        images = images.to(device, non_blocking=True)
        targets = targets.to(device, non_blocking=True)
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            logits = model(images)
            loss = F.cross_entropy(logits, targets, label_smoothing=0.1)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        scheduler.step()
        loss_sum += loss.item()
        n += 1
        if it % args.log_interval == 0:
            print(f"epoch {epoch} it {it} loss {loss.item():.4f} lr {scheduler.get_last_lr()[0]:.2e}")
    return loss_sum / max(n, 1)


def main():
    args = get_args()
    device = torch.device("cuda")
    model = timm.create_model(args.model, pretrained=False, num_classes=args.num_classes)
    model.to(device)

    ds = RandomImages(args.batch_size * args.steps_per_epoch, args.img_size, args.num_classes)
    loader = DataLoader(ds, batch_size=args.batch_size, shuffle=True, num_workers=0, drop_last=True)

    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    total = args.epochs * len(loader)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: cosine_with_warmup(s, args.warmup_steps, total)
    )
    for epoch in range(args.epochs):
        t0 = time.time()
        avg = train_one_epoch(model, loader, optimizer, scheduler, device, epoch, args)
        print(f"epoch {epoch} avg loss {avg:.4f} time {time.time() - t0:.1f}s")


if __name__ == "__main__":
    main()
