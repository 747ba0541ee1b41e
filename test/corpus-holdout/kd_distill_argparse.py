"""Knowledge distillation: ResNet-101 teacher -> MobileNetV3 student on ImageNet-100.

Hinton KD (soft targets at temperature T) + hard-label CE. Teacher is frozen.
"""
import argparse
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision import datasets, models, transforms


def get_args():
    p = argparse.ArgumentParser(description="KD")
    p.add_argument("--data", default="/datasets/imagenet100")
    p.add_argument("--teacher-ckpt", default="ckpt/r101_in100.pt")
    p.add_argument("--epochs", type=int, default=120)
    p.add_argument("--bs", type=int, default=256)
    p.add_argument("--accum", type=int, default=2)
    p.add_argument("--lr", type=float, default=0.4)
    p.add_argument("--T", type=float, default=4.0)
    p.add_argument("--alpha", type=float, default=0.9)
    p.add_argument("--gpus", default=None, help="comma list, forwarded to CUDA_VISIBLE_DEVICES")
    return p.parse_args()


def load_teacher(path, num_classes, device):
    t = models.resnet101(num_classes=num_classes)
    t.load_state_dict(torch.load(path, map_location="cpu"))
    t.eval()
    for p in t.parameters():
        p.requires_grad_(False)
    return t.to(device)


def kd_loss(student_logits, teacher_logits, T):
    return F.kl_div(F.log_softmax(student_logits / T, dim=1), F.softmax(teacher_logits / T, dim=1),
                    reduction="batchmean") * (T * T)


@torch.inference_mode()
def validate(student, loader, device):
    student.eval()
    correct = total = 0
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        correct += (student(x).argmax(1) == y).sum().item()
        total += y.numel()
    return correct / total


def main():
    args = get_args()
    if args.gpus:
        os.environ["CUDA_VISIBLE_DEVICES"] = args.gpus
    device = torch.device("cuda")
    norm = transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
    train_ds = datasets.ImageFolder(os.path.join(args.data, "train"), transforms.Compose([
        transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(), transforms.ToTensor(), norm]))
    val_ds = datasets.ImageFolder(os.path.join(args.data, "val"), transforms.Compose([
        transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor(), norm]))
    train_dl = DataLoader(train_ds, args.bs, shuffle=True, num_workers=16, pin_memory=True, drop_last=True)
    val_dl = DataLoader(val_ds, 512, num_workers=16, pin_memory=True)
    n_cls = len(train_ds.classes)

    teacher = load_teacher(args.teacher_ckpt, n_cls, device)
    student = models.mobilenet_v3_large(num_classes=n_cls).to(device)
    if torch.cuda.device_count() > 1:
        student = torch.nn.DataParallel(student)  # expect: OOM108

    opt = torch.optim.SGD(student.parameters(), lr=args.lr, momentum=0.9, weight_decay=4e-5, nesterov=True)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=args.lr, total_steps=args.epochs * len(train_dl))

    for epoch in range(args.epochs):
        student.train()
        t0 = time.time()
        kd_total, ce_total = 0.0, 0.0
        for i, (x, y) in enumerate(train_dl):
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            with torch.no_grad():
                t_logits = teacher(x)
            s_logits = student(x)
            l_kd = kd_loss(s_logits, t_logits, args.T)
            l_ce = F.cross_entropy(s_logits, y)
            loss = args.alpha * l_kd + (1 - args.alpha) * l_ce
            (loss / args.accum).backward()
            if (i + 1) % args.accum == 0:
                opt.step()  # expect: OOM103
                sched.step()
            kd_total += l_kd  # expect: OOM102
            ce_total += l_ce.item()
        acc = validate(student, val_dl, device)
        print(f"epoch {epoch:3d} kd {kd_total.item() / len(train_dl):.4f} ce {ce_total / len(train_dl):.4f} "
              f"val@1 {acc:.4f} ({time.time() - t0:.0f}s)")
        state = student.module.state_dict() if hasattr(student, "module") else student.state_dict()
        torch.save(state, f"student_ep{epoch}.pt")


if __name__ == "__main__":
    main()
