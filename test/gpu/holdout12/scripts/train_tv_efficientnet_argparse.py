"""Fine-tune-from-scratch a torchvision classifier picked by name (bf16 autocast, cosine LR, label smoothing)."""
import argparse
import time

import torch
import torch.nn as nn
import torchvision
from torch.utils.data import DataLoader, Dataset


def get_args():
    parser = argparse.ArgumentParser(description="torchvision classification")
    parser.add_argument("--model", default="efficientnet_b2", type=str)
    parser.add_argument("-b", "--batch-size", default=96, type=int, dest="batch_size")
    parser.add_argument("--img", "--image-size", default=260, type=int, dest="image_size")
    parser.add_argument("--classes", default=102, type=int, dest="num_classes")
    parser.add_argument("--lr", default=0.05, type=float)
    parser.add_argument("--wd", default=1e-4, type=float, dest="weight_decay")
    parser.add_argument("--epochs", default=2, type=int)
    parser.add_argument("--iters-per-epoch", default=3, type=int, dest="iters_per_epoch")
    parser.add_argument("--workers", default=4, type=int)
    return parser.parse_args()


class FakeFlowers(Dataset):
    def __init__(self, n, size, num_classes):
        self.n, self.size, self.num_classes = n, size, num_classes

    def __len__(self):
        return self.n

    def __getitem__(self, idx):
        img = torch.rand(3, self.size, self.size)
        img = (img - 0.45) / 0.225
        return img, idx % self.num_classes


def train_one_epoch(model, loader, criterion, optimizer, scheduler, device, epoch):
    model.train()
    for i, (images, target) in enumerate(loader):
        images = images.to(device, non_blocking=True)
        target = target.to(device, non_blocking=True)
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            output = model(images)
            loss = criterion(output, target)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        scheduler.step()
        acc = (output.argmax(1) == target).float().mean().item()
        print(f"Epoch [{epoch}] [{i}/{len(loader)}] loss {loss.item():.4f} acc {acc:.3f}")


def main():
    args = get_args()
    device = torch.device("cuda")
    model = torchvision.models.get_model(args.model, weights=None, num_classes=args.num_classes)
    model.to(device)
    ds = FakeFlowers(args.batch_size * args.iters_per_epoch, args.image_size, args.num_classes)
    loader = DataLoader(ds, batch_size=args.batch_size, shuffle=True, num_workers=args.workers,
                        pin_memory=True, drop_last=True)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=args.weight_decay)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs * len(loader))
    start = time.time()
    for epoch in range(args.epochs):
        train_one_epoch(model, loader, criterion, optimizer, scheduler, device, epoch)
    print(f"done in {time.time() - start:.1f}s; peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
