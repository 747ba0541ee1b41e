"""Train an image classifier from timm, picked by name on the command line.

    python train_timm_argparse_choices.py --model convnext_nano -b 128 --img-size 224

Synthetic data stands in for the ImageFolder we use on the cluster.
"""
import argparse
import math
import time

import timm
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

SUPPORTED = ["convnext_nano", "resnet26d", "efficientnet_b1", "regnety_016"]


def get_args():
    p = argparse.ArgumentParser(description="timm classifier")
    p.add_argument("--model", default="convnext_nano", choices=SUPPORTED)
    p.add_argument("--num-classes", type=int, default=200)
    p.add_argument("--img-size", type=int, default=224)
    p.add_argument("-b", "--batch-size", type=int, default=128)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--weight-decay", type=float, default=0.05)
    p.add_argument("--drop-path", type=float, default=0.1)
    p.add_argument("--steps", type=int, default=12)
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--amp", action="store_true", default=True)
    args, unknown = p.parse_known_args()
    if unknown:
        print("ignoring unknown args:", unknown)
    return args


class RandomImages(Dataset):
    def __init__(self, n, img_size, num_classes):
        self.n, self.img_size, self.num_classes = n, img_size, num_classes

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        x = torch.randn(3, self.img_size, self.img_size)
        y = torch.randint(0, self.num_classes, ()).item()
        return x, y


def main():
    args = get_args()
    device = torch.device("cuda")

    model = timm.create_model(args.model, pretrained=False, num_classes=args.num_classes,
                              drop_path_rate=args.drop_path)
    model.to(device)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"{args.model}: {n_params / 1e6:.1f}M params")

    train_ds = RandomImages(args.batch_size * args.steps, args.img_size, args.num_classes)
    val_ds = RandomImages(args.batch_size * 2, args.img_size, args.num_classes)
    train_loader = DataLoader(train_ds, batch_size=args.batch_size, shuffle=True, num_workers=args.workers,
                              pin_memory=True, drop_last=True)
    val_loader = DataLoader(val_ds, batch_size=args.batch_size, num_workers=args.workers)

    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    total = len(train_loader)
    sched = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 0.5 * (1 + math.cos(math.pi * s / total)))
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)

    model.train()
    t0 = time.time()
    for step, (x, y) in enumerate(train_loader):
        x = x.to(device, non_blocking=True)
        y = y.to(device, non_blocking=True)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=args.amp):
            logits = model(x)
            loss = criterion(logits, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        sched.step()
        if step % 4 == 0:
            print(f"step {step} loss {loss.item():.4f} lr {sched.get_last_lr()[0]:.2e}")
    print(f"train {time.time() - t0:.1f}s")

    model.eval()
    all_logits, all_targets = [], []
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        for x, y in val_loader:
            all_logits.append(model(x.to(device)).float())
            all_targets.append(y.to(device))
    logits = torch.cat(all_logits)
    targets = torch.cat(all_targets)
    acc = (logits.argmax(1) == targets).float().mean().item()
    print(f"val acc {acc:.3f}  peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
