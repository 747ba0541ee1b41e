"""DenseNet-121 on a 100-class image folder (synthetic stand-in), mixed precision."""
import argparse
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset
from torchvision import models


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--arch", default="densenet121")
    p.add_argument("--num-classes", type=int, default=100)
    p.add_argument("--batch-size", type=int, default=96)
    p.add_argument("--img-size", type=int, default=224)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--max-steps", type=int, default=8)
    p.add_argument("--clip", type=float, default=5.0)
    return p.parse_args()


class RandomImages(Dataset):
    def __init__(self, n, size, num_classes):
        self.n, self.size, self.num_classes = n, size, num_classes

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.randn(3, self.size, self.size), torch.randint(0, self.num_classes, ()).item()


def main():
    args = parse_args()
    device = torch.device("cuda")
    model = getattr(models, args.arch)(weights=None, num_classes=args.num_classes).to(device)
    ds = RandomImages(args.batch_size * args.max_steps, args.img_size, args.num_classes)
    loader = DataLoader(ds, batch_size=args.batch_size, shuffle=True, num_workers=2, drop_last=True)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.max_steps)
    scaler = torch.amp.GradScaler("cuda")
    criterion = nn.CrossEntropyLoss()

    step = 0
    model.train()
    for epoch in range(args.epochs):
        for images, targets in loader:
            images = images.to(device, non_blocking=True)
            targets = targets.to(device, non_blocking=True)
            t0 = time.time()
            with torch.autocast("cuda", dtype=torch.float16):
                logits = model(images)
                loss = criterion(logits, targets)
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()
            step += 1
            print(f"epoch {epoch} step {step} loss {loss.item():.4f} ({time.time() - t0:.2f}s)")
            if step >= args.max_steps:
                break
    print("peak GiB", torch.cuda.max_memory_allocated() / 2**30)


if __name__ == "__main__":
    main()
