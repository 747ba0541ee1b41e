"""Train a small ResNet with a gradient-norm penalty (flatness regulariser).

loss_total = CE + lambda * ||grad_theta CE||^2
"""
import argparse
import os

# pick a GPU only if the user did not choose one already
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "0")

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
import torchvision.transforms as T


def build_model(num_classes=10):
    m = torchvision.models.resnet18(num_classes=num_classes)
    m.conv1 = nn.Conv2d(3, 64, 3, 1, 1, bias=False)
    m.maxpool = nn.Identity()
    return m


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=100)
    ap.add_argument("--batch_size", type=int, default=128)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--gp_weight", type=float, default=0.01)
    ap.add_argument("--log_every", type=int, default=50)
    args = ap.parse_args()
    device = "cuda"

    tf = T.Compose([T.RandomCrop(32, 4), T.RandomHorizontalFlip(), T.ToTensor()])
    train_set = torchvision.datasets.CIFAR10("data", train=True, download=True, transform=tf)
    train_loader = torch.utils.data.DataLoader(train_set, batch_size=args.batch_size, shuffle=True, num_workers=4)
    test_set = torchvision.datasets.CIFAR10("data", train=False, transform=T.ToTensor())
    test_loader = torch.utils.data.DataLoader(test_set, batch_size=512, num_workers=4)

    model = build_model().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, args.epochs)

    for epoch in range(args.epochs):
        model.train()
        for step, (x, y) in enumerate(train_loader):
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad(set_to_none=True)
            logits = model(x)
            loss = F.cross_entropy(logits, y)
            loss.backward(create_graph=True)  # expect: OOM116
            grad_norm_sq = sum(p.grad.pow(2).sum() for p in model.parameters() if p.grad is not None)
            penalty = args.gp_weight * grad_norm_sq
            penalty.backward()
            optimizer.step()
            if step % args.log_every == 0:
                print(f"epoch {epoch} step {step} ce {loss.item():.4f} |g|^2 {grad_norm_sq.item():.4f}")
        scheduler.step()

        model.eval()
        correct = 0
        with torch.no_grad():
            for x, y in test_loader:
                correct += (model(x.to(device)).argmax(1).cpu() == y).sum().item()
        print(f"epoch {epoch}: test acc {correct / len(test_set):.4f}")


if __name__ == "__main__":
    main()
