"""Knowledge distillation: ResNet-50 teacher -> ResNet-18 student on CIFAR-100 (Hinton et al. 2015)."""
import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
import torchvision
import torchvision.transforms as T
from torchvision import models


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--teacher_ckpt", default="checkpoints/resnet50_cifar100.pth")
    p.add_argument("--epochs", type=int, default=200)
    p.add_argument("--batch_size", type=int, default=128)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--T", type=float, default=4.0, dest="temperature")
    p.add_argument("--alpha", type=float, default=0.9)
    return p.parse_args()


def kd_loss(student_logits, teacher_logits, labels, T, alpha):
    soft = F.kl_div(
        F.log_softmax(student_logits / T, dim=1),
        F.softmax(teacher_logits / T, dim=1),
        reduction="batchmean",
    ) * (T * T)
    hard = F.cross_entropy(student_logits, labels)
    return alpha * soft + (1.0 - alpha) * hard


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    correct, total = 0, 0
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        correct += (model(x).argmax(1) == y).sum().item()
        total += y.size(0)
    return 100.0 * correct / total


def main():
    args = get_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    mean, std = (0.5071, 0.4865, 0.4409), (0.2673, 0.2564, 0.2762)
    train_tf = T.Compose([T.RandomCrop(32, padding=4), T.RandomHorizontalFlip(), T.ToTensor(), T.Normalize(mean, std)])
    test_tf = T.Compose([T.ToTensor(), T.Normalize(mean, std)])
    train_set = torchvision.datasets.CIFAR100("data", train=True, download=True, transform=train_tf)
    test_set = torchvision.datasets.CIFAR100("data", train=False, download=True, transform=test_tf)
    train_loader = torch.utils.data.DataLoader(train_set, batch_size=args.batch_size, shuffle=True, num_workers=4, pin_memory=True)
    test_loader = torch.utils.data.DataLoader(test_set, batch_size=256, num_workers=4)

    teacher = models.resnet50(num_classes=100)
    teacher.load_state_dict(torch.load(args.teacher_ckpt, map_location="cpu"))
    teacher = teacher.to(device)
    teacher.eval()  # teacher is fixed
    print(f"teacher acc: {evaluate(teacher, test_loader, device):.2f}")

    student = models.resnet18(num_classes=100).to(device)
    optimizer = optim.SGD(student.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4, nesterov=True)
    scheduler = optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)

    best = 0.0
    for epoch in range(args.epochs):
        student.train()
        t0 = time.time()
        running = 0.0
        for x, y in train_loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            s_logits = student(x)
            t_logits = teacher(x)  # expect: OOM113
            loss = kd_loss(s_logits, t_logits, y, args.temperature, args.alpha)

            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            running += loss.item()
        scheduler.step()
        torch.cuda.empty_cache()

        acc = evaluate(student, test_loader, device)
        print(f"epoch {epoch:3d} loss {running / len(train_loader):.4f} acc {acc:.2f} ({time.time() - t0:.0f}s)")
        if acc > best:
            best = acc
            torch.save(student.state_dict(), "checkpoints/resnet18_kd.pth")


if __name__ == "__main__":
    main()
