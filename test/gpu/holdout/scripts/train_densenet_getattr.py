"""Generic torchvision classifier trainer: pick the network with --arch."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision.models as models
from torch.utils.data import DataLoader, TensorDataset

model_names = sorted(
    name for name in models.__dict__ if name.islower() and not name.startswith("__") and callable(models.__dict__[name])
)

parser = argparse.ArgumentParser(description="torchvision training")
parser.add_argument("-a", "--arch", metavar="ARCH", default="densenet121", choices=model_names)
parser.add_argument("--batch-size", "-b", type=int, default=64, dest="batch_size")
parser.add_argument("--image-size", type=int, default=224, dest="image_size")
parser.add_argument("--num-classes", type=int, default=102, dest="num_classes")  # Flowers-102
parser.add_argument("--lr", type=float, default=0.05)
parser.add_argument("--momentum", type=float, default=0.9)
parser.add_argument("--wd", type=float, default=5e-4, dest="weight_decay")
parser.add_argument("--epochs", type=int, default=1)
parser.add_argument("--train-batches", type=int, default=5)
parser.add_argument("--val-batches", type=int, default=2)


def fake_split(n_batches, bs, size, ncls):
    x = torch.randn(n_batches * bs, 3, size, size)
    y = torch.randint(0, ncls, (n_batches * bs,))
    return TensorDataset(x, y)


def validate(model, loader, device):
    model.eval()
    correct, total, loss_sum = 0, 0, 0.0
    with torch.no_grad():
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                out = model(x)
            loss_sum += F.cross_entropy(out.float(), y, reduction="sum").item()
            correct += (out.argmax(1) == y).sum().item()
            total += y.numel()
    return loss_sum / total, correct / total


def main():
    args = parser.parse_args()
    device = torch.device("cuda")
    print(f"=> creating model '{args.arch}'")
    model = getattr(models, args.arch)(weights=None, num_classes=args.num_classes)
    model = model.to(device)

    train_loader = DataLoader(fake_split(args.train_batches, args.batch_size, args.image_size, args.num_classes),
                              batch_size=args.batch_size, shuffle=True)
    val_loader = DataLoader(fake_split(args.val_batches, args.batch_size, args.image_size, args.num_classes),
                            batch_size=args.batch_size)

    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), args.lr, momentum=args.momentum,
                                weight_decay=args.weight_decay, nesterov=True)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=args.lr,
                                                    total_steps=args.epochs * len(train_loader))

    for epoch in range(args.epochs):
        model.train()
        for i, (images, target) in enumerate(train_loader):
            images = images.to(device, non_blocking=True)
            target = target.to(device, non_blocking=True)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                output = model(images)
                loss = criterion(output, target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scheduler.step()
            print(f"Epoch [{epoch}][{i}/{len(train_loader)}] loss {loss.item():.4f}")
        val_loss, val_acc = validate(model, val_loader, device)
        print(f" * val loss {val_loss:.3f} acc@1 {val_acc:.3f}")


if __name__ == "__main__":
    main()
