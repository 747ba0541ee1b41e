"""Fine-tune a timm PVT-v2 classifier on a (synthetic) 200-class dataset.

    python train_pvt_v2_timm_argparse.py --model pvt_v2_b2 -b 96 --drop-path 0.1
"""
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
    p.add_argument("--model", default="pvt_v2_b2", help="any timm model name")
    p.add_argument("-b", "--batch-size", type=int, default=96, dest="batch_size")
    p.add_argument("--img-size", type=int, default=224)
    p.add_argument("--num-classes", type=int, default=200)
    p.add_argument("--drop-path", type=float, default=0.1, dest="drop_path_rate")
    p.add_argument("--lr", type=float, default=5e-4)
    p.add_argument("--wd", type=float, default=0.05)
    p.add_argument("--clip-grad", type=float, default=1.0)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--amp", action="store_true", default=True)
    return p.parse_args()


class RandomImages(Dataset):
    def __init__(self, n, size, num_classes):
        self.n, self.size, self.num_classes = n, size, num_classes

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        x = torch.randn(3, self.size, self.size)
        y = torch.randint(0, self.num_classes, ()).item()
        return x, y


def param_groups(model, wd):
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        if p.ndim <= 1 or name.endswith(".bias") or "pos_embed" in name:
            no_decay.append(p)
        else:
            decay.append(p)
    return [{"params": decay, "weight_decay": wd}, {"params": no_decay, "weight_decay": 0.0}]


def main():
    args = get_args()
    device = torch.device("cuda")
    model = timm.create_model(args.model, pretrained=False, num_classes=args.num_classes,
                              drop_path_rate=args.drop_path_rate)
    model.to(device)
    print(f"{args.model}: {sum(p.numel() for p in model.parameters()) / 1e6:.1f}M params")

    ds = RandomImages(args.batch_size * args.steps, args.img_size, args.num_classes)
    loader = DataLoader(ds, batch_size=args.batch_size, shuffle=True, num_workers=2, drop_last=True,
                        pin_memory=True)

    optimizer = torch.optim.AdamW(param_groups(model, args.wd), lr=args.lr, foreach=True)
    sched = torch.optim.lr_scheduler.LambdaLR(
        optimizer,
        lambda s: (s + 1) / args.warmup if s < args.warmup
        else 0.5 * (1 + math.cos(math.pi * (s - args.warmup) / max(1, args.steps - args.warmup))))
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)

    model.train()
    t0 = time.time()
    for step, (images, targets) in enumerate(loader):
        images = images.to(device, non_blocking=True)
        targets = targets.to(device, non_blocking=True)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=args.amp):
            logits = model(images)
            loss = criterion(logits, targets)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        gn = nn.utils.clip_grad_norm_(model.parameters(), args.clip_grad)
        optimizer.step()
        sched.step()
        if step % 2 == 0:
            print(f"step {step} loss {loss.item():.4f} grad_norm {gn.item():.2f} lr {sched.get_last_lr()[0]:.2e}")
    print(f"done in {time.time() - t0:.1f}s, max alloc {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
