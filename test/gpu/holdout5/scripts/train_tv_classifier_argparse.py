import argparse
import math

import torch
import torch.nn as nn
import torchvision
from torch.utils.data import DataLoader, TensorDataset


def get_args():
    parser = argparse.ArgumentParser(description="ImageNet-style classifier training (synthetic data)")
    parser.add_argument("--arch", default="wide_resnet50_2", help="any torchvision.models constructor")
    parser.add_argument("--num-classes", type=int, default=1000, dest="num_classes")
    parser.add_argument("-b", "--batch-size", type=int, default=96, dest="batch_size")
    parser.add_argument("--img-size", type=int, default=224)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--wd", type=float, default=0.05)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--steps-per-epoch", type=int, default=5)
    parser.add_argument("--label-smoothing", type=float, default=0.1)
    parser.add_argument("--clip-grad", type=float, default=1.0)
    parser.add_argument("--no-channels-last", action="store_true")
    return parser.parse_args()


def main():
    args = get_args()
    device = "cuda"

    model = getattr(torchvision.models, args.arch)(weights=None, num_classes=args.num_classes)
    model = model.to(device)
    if not args.no_channels_last:
        model = model.to(memory_format=torch.channels_last)

    n = args.batch_size * args.steps_per_epoch
    images = torch.randn(n, 3, args.img_size, args.img_size)
    targets = torch.randint(0, args.num_classes, (n,))
    loader = DataLoader(TensorDataset(images, targets), batch_size=args.batch_size, shuffle=True, pin_memory=True)

    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=args.wd)
    total_steps = args.epochs * len(loader)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: 0.5 * (1 + math.cos(math.pi * s / total_steps)))
    criterion = nn.CrossEntropyLoss(label_smoothing=args.label_smoothing)

    model.train()
    for epoch in range(args.epochs):
        for i, (x, y) in enumerate(loader):
            x = x.to(device, non_blocking=True)
            if not args.no_channels_last:
                x = x.contiguous(memory_format=torch.channels_last)
            y = y.to(device, non_blocking=True)

            with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
                logits = model(x)
                loss = criterion(logits, y)

            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), args.clip_grad)
            optimizer.step()
            scheduler.step()

            acc = (logits.argmax(dim=1) == y).float().mean()
            print(f"[{epoch}][{i}/{len(loader)}] loss={loss.item():.3f} acc={acc.item():.3f}")

    print(f"peak {torch.cuda.max_memory_allocated() / 1e9:.2f} GB")


if __name__ == "__main__":
    main()
