#!/usr/bin/env python3
"""Linear probe of a pretrained ViT on a downstream dataset (only the head is optimised)."""
import argparse
import time

import torch
import torch.nn.functional as F
import timm
from timm.data import create_transform, resolve_data_config
from torchvision.datasets import ImageFolder
from torch.utils.data import DataLoader

parser = argparse.ArgumentParser()
parser.add_argument("--model", default="vit_small_patch16_224", type=str)
parser.add_argument("--data", default="/data/food101", type=str)
parser.add_argument("--num-classes", type=int, default=101, dest="num_classes")
parser.add_argument("--batch-size", type=int, default=256, dest="batch_size")
parser.add_argument("--epochs", type=int, default=30)
parser.add_argument("--lr", type=float, default=0.1)
parser.add_argument("--workers", type=int, default=8)


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    correct = n = 0
    for images, target in loader:
        images, target = images.to(device, non_blocking=True), target.to(device, non_blocking=True)
        with torch.autocast("cuda", dtype=torch.float16):
            logits = model(images)
        correct += (logits.argmax(-1) == target).sum().item()
        n += target.numel()
    return 100.0 * correct / n


def main():
    args = parser.parse_args()
    device = torch.device("cuda")

    model = timm.create_model(args.model, pretrained=True, num_classes=args.num_classes)
    model.reset_classifier(args.num_classes)
    model = model.to(device)
    data_cfg = resolve_data_config({}, model=model)
    train_tf = create_transform(**data_cfg, is_training=True)
    eval_tf = create_transform(**data_cfg, is_training=False)

    train_loader = DataLoader(ImageFolder(f"{args.data}/train", train_tf), batch_size=args.batch_size,
                              shuffle=True, num_workers=args.workers, pin_memory=True, drop_last=True)
    val_loader = DataLoader(ImageFolder(f"{args.data}/val", eval_tf), batch_size=args.batch_size,
                            num_workers=args.workers, pin_memory=True)

    optimizer = torch.optim.SGD(model.head.parameters(), lr=args.lr, momentum=0.9, weight_decay=0.0)  # expect: OOM114
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs * len(train_loader))
    scaler = torch.cuda.amp.GradScaler()

    for epoch in range(args.epochs):
        model.train()
        t0 = time.time()
        for it, (images, target) in enumerate(train_loader):
            images, target = images.to(device, non_blocking=True), target.to(device, non_blocking=True)
            with torch.autocast("cuda", dtype=torch.float16):
                logits = model(images)
                loss = F.cross_entropy(logits, target)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            for p in model.parameters():
                p.grad = None
            scheduler.step()
            if it % 50 == 0:
                print(f"epoch {epoch} it {it} loss {loss.item():.4f} lr {scheduler.get_last_lr()[0]:.4f}")
        acc = evaluate(model, val_loader, device)
        print(f"epoch {epoch}: top-1 {acc:.2f} ({time.time() - t0:.0f}s)")


if __name__ == "__main__":
    main()
