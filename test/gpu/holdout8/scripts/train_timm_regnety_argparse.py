#!/usr/bin/env python3
"""Fine-tune a timm classifier picked on the command line (dog breeds, 120 classes).

    python train_timm_regnety_argparse.py --model regnety_032 -b 128 --img-size 224

Synthetic images stand in for the ImageFolder dataset so the script runs anywhere.
"""
import argparse
import math
import time

import timm
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


def parse_args():
    parser = argparse.ArgumentParser(description="timm fine-tuning")
    parser.add_argument("--model", default="regnety_032", type=str, help="timm model name")
    parser.add_argument("--num-classes", type=int, default=120, dest="num_classes")
    parser.add_argument("-b", "--batch-size", type=int, default=128, dest="bs", help="batch size per step")
    parser.add_argument("--img-size", type=int, default=224, dest="img_size")
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--weight-decay", type=float, default=0.05, dest="wd")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--steps-per-epoch", type=int, default=4, dest="steps_per_epoch")
    parser.add_argument("--amp-dtype", default="bfloat16", choices=["float16", "bfloat16"], dest="amp_dtype")
    parser.add_argument("--clip-grad", type=float, default=1.0, dest="clip_grad")
    parser.add_argument("-j", "--workers", type=int, default=4)
    parser.add_argument("--drop-path", type=float, default=0.05, dest="drop_path")
    return parser.parse_args()


class RandomImages(Dataset):
    """Stands in for torchvision.datasets.ImageFolder(root, transform=...)."""

    def __init__(self, length, img_size, num_classes):
        self.length = length
        self.img_size = img_size
        self.num_classes = num_classes

    def __len__(self):
        return self.length

    def __getitem__(self, idx):
        img = torch.randn(3, self.img_size, self.img_size)
        target = torch.randint(0, self.num_classes, ()).item()
        return img, target


def train_one_epoch(model, loader, criterion, optimizer, scheduler, scaler, args, epoch, amp_dtype):
    model.train()
    t0 = time.time()
    for i, (images, targets) in enumerate(loader):
        images = images.cuda(non_blocking=True)
        targets = targets.cuda(non_blocking=True)
        with torch.autocast(device_type="cuda", dtype=amp_dtype):
            output = model(images)
            loss = criterion(output, targets)
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        if args.clip_grad:
            scaler.unscale_(optimizer)
            nn.utils.clip_grad_norm_(model.parameters(), args.clip_grad)
        scaler.step(optimizer)
        scaler.update()
        scheduler.step()
        if i % 2 == 0:
            print(f"epoch {epoch} iter {i}/{len(loader)} loss {loss.item():.4f} "
                  f"lr {optimizer.param_groups[0]['lr']:.2e} ({time.time() - t0:.1f}s)")
        if i + 1 >= args.steps_per_epoch:
            break


def main():
    args = parse_args()
    torch.backends.cudnn.benchmark = True
    amp_dtype = torch.bfloat16 if args.amp_dtype == "bfloat16" else torch.float16

    model = timm.create_model(args.model, pretrained=False, num_classes=args.num_classes,
                              drop_path_rate=args.drop_path)
    model = model.cuda()
    print(f"{args.model}: {sum(p.numel() for p in model.parameters()) / 1e6:.1f}M params")

    dataset = RandomImages(args.bs * args.steps_per_epoch, args.img_size, args.num_classes)
    loader = DataLoader(dataset, batch_size=args.bs, shuffle=True, num_workers=args.workers,
                        pin_memory=True, drop_last=True)

    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=args.wd)
    total_steps = args.epochs * min(len(loader), args.steps_per_epoch)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=args.lr, total_steps=total_steps,
                                                    pct_start=0.25)
    scaler = torch.amp.GradScaler("cuda", enabled=(amp_dtype == torch.float16))

    for epoch in range(args.epochs):
        train_one_epoch(model, loader, criterion, optimizer, scheduler, scaler, args, epoch, amp_dtype)

    print(f"peak allocated {torch.cuda.max_memory_allocated() / 2 ** 30:.2f} GiB")


if __name__ == "__main__":
    main()
