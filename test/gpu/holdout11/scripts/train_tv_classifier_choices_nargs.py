"""Caltech-256-style classifier with a torchvision architecture chosen on the command line.

    python train_tv_classifier_choices_nargs.py --arch regnet_x_3_2gf --input-size 256 320 -b 96
"""
import argparse
import time

import torch
import torch.nn as nn
import torchvision
from torch.utils.data import DataLoader, Dataset

ARCHS = ["mnasnet1_0", "shufflenet_v2_x2_0", "regnet_x_3_2gf", "resnet50", "efficientnet_b2"]


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--arch", default="regnet_x_3_2gf", choices=ARCHS)
    parser.add_argument("--input-size", nargs=2, type=int, default=[256, 320], metavar=("H", "W"))
    parser.add_argument("-b", "--batch-size", type=int, default=96, dest="batch_size")
    parser.add_argument("--num-classes", type=int, default=257)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--iters-per-epoch", type=int, default=5)
    parser.add_argument("--label-smoothing", type=float, default=0.1)
    return parser.parse_args()


class FakeImages(Dataset):
    def __init__(self, n, size, num_classes):
        self.n, self.size, self.k = n, size, num_classes

    def __len__(self):
        return self.n

    def __getitem__(self, idx):
        return torch.randn(3, *self.size), idx % self.k


def train_one_epoch(model, loader, criterion, optimizer, scheduler, device, epoch):
    model.train()
    t0 = time.time()
    for i, (images, target) in enumerate(loader):
        images, target = images.to(device, non_blocking=True), target.to(device, non_blocking=True)
        output = model(images)
        loss = criterion(output, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
        if i % 2 == 0:
            print(f"Epoch [{epoch}][{i}/{len(loader)}] loss {loss.item():.4f} {time.time() - t0:.1f}s")


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    correct = total = 0
    for images, target in loader:
        output = model(images.to(device))
        correct += (output.argmax(1).cpu() == target).sum().item()
        total += target.size(0)
    return 100.0 * correct / total


def main():
    args = parse_args()
    device = torch.device("cuda")
    model = torchvision.models.get_model(args.arch, weights=None, num_classes=args.num_classes).to(device)

    train_ds = FakeImages(args.batch_size * args.iters_per_epoch, tuple(args.input_size), args.num_classes)
    val_ds = FakeImages(args.batch_size * 2, tuple(args.input_size), args.num_classes)
    train_loader = DataLoader(train_ds, batch_size=args.batch_size, shuffle=True, num_workers=8, pin_memory=True)
    val_loader = DataLoader(val_ds, batch_size=args.batch_size * 2, num_workers=4)

    criterion = nn.CrossEntropyLoss(label_smoothing=args.label_smoothing)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-5)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs * len(train_loader))
    for epoch in range(args.epochs):
        train_one_epoch(model, train_loader, criterion, optimizer, scheduler, device, epoch)
        print(f"epoch {epoch} val acc {evaluate(model, val_loader, device):.2f}")


if __name__ == "__main__":
    main()
