"""Knowledge distillation: ResNet-50 teacher -> MobileNetV2 student on CIFAR-100.

Hinton KD loss (soft targets at temperature T) + hard-label CE.
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from torch.utils.data import DataLoader
from torchvision import transforms


def kd_loss(student_logits, teacher_logits, T):
    return F.kl_div(F.log_softmax(student_logits / T, dim=1),
                    F.softmax(teacher_logits / T, dim=1), reduction="batchmean") * T * T


@torch.no_grad()
def teacher_forward(teacher, x):
    return teacher(x)


def evaluate(model, loader, device):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            correct += (model(x).argmax(1) == y).sum().item()
            total += y.numel()
    return correct / total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--teacher-ckpt", default="resnet50_cifar100.pt")
    ap.add_argument("--epochs", type=int, default=200)
    ap.add_argument("--T", type=float, default=4.0)
    ap.add_argument("--alpha", type=float, default=0.9)
    args = ap.parse_args()
    device = torch.device("cuda")

    norm = transforms.Normalize((0.507, 0.487, 0.441), (0.267, 0.256, 0.276))
    train_tf = transforms.Compose([transforms.RandomCrop(32, padding=4), transforms.RandomHorizontalFlip(),
                                   transforms.ToTensor(), norm])
    test_tf = transforms.Compose([transforms.ToTensor(), norm])
    train_dl = DataLoader(torchvision.datasets.CIFAR100("data", True, train_tf, download=True),
                          batch_size=128, shuffle=True, num_workers=8)
    test_dl = DataLoader(torchvision.datasets.CIFAR100("data", False, test_tf, download=True),
                         batch_size=256, num_workers=8)

    teacher = torchvision.models.resnet50(num_classes=100)
    teacher.load_state_dict(torch.load(args.teacher_ckpt, map_location="cpu"))
    teacher = teacher.to(device)
    teacher.eval()

    student = torchvision.models.mobilenet_v2(num_classes=100).to(device)
    optimizer = torch.optim.SGD(student.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4, nesterov=True)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)

    history = {"kd": [], "ce": [], "acc": []}
    teacher_confidence = []
    for epoch in range(args.epochs):
        student.train()
        kd_sum, ce_sum = 0.0, 0.0
        for step, (x, y) in enumerate(train_dl):
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            if step % 2 == 0:
                with torch.no_grad():
                    t_logits = teacher(x)
            else:
                t_logits = teacher_forward(teacher, x)
            teacher_confidence.append(t_logits.softmax(1).max(1).values.mean())

            s_logits = student(x)
            loss_kd = kd_loss(s_logits, t_logits, args.T)
            loss_ce = F.cross_entropy(s_logits, y)
            loss = args.alpha * loss_kd
            loss = loss + (1 - args.alpha) * loss_ce

            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()

            kd_sum += loss_kd.item()
            ce_sum += loss_ce.item()
        scheduler.step()

        acc = evaluate(student, test_dl, device)
        history["kd"].append(kd_sum / len(train_dl))
        history["ce"].append(ce_sum / len(train_dl))
        history["acc"].append(acc)
        print(f"epoch {epoch}: kd {history['kd'][-1]:.4f} ce {history['ce'][-1]:.4f} acc {acc:.4f}")

    torch.save(student.state_dict(), "mbv2_kd.pt")


if __name__ == "__main__":
    main()
