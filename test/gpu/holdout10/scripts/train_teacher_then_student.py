"""Two models trained one after the other in one script: first a ResNet-50 teacher on the labels, then a
ShuffleNetV2 student distilled from the (now frozen) teacher with a KL term on softened logits."""
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from torchvision import models

STAGES = {
    "teacher": {"arch": "resnet50", "batch_size": 128, "steps": 8, "lr": 0.02},
    "student": {"arch": "shufflenet_v2_x1_0", "batch_size": 256, "steps": 8, "lr": 2e-3},
}
COMMON = {"num_classes": 100, "image_size": 160, "temperature": 4.0, "alpha": 0.7}


class Images(Dataset):
    def __init__(self, n, size, num_classes):
        self.n, self.size, self.num_classes = n, size, num_classes

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.randn(3, self.size, self.size), torch.randint(self.num_classes, ()).item()


def loader_for(stage):
    s = STAGES[stage]
    ds = Images(s["batch_size"] * s["steps"], COMMON["image_size"], COMMON["num_classes"])
    return DataLoader(ds, batch_size=s["batch_size"], shuffle=True, num_workers=4, drop_last=True, pin_memory=True)


def build(stage):
    return getattr(models, STAGES[stage]["arch"])(weights=None, num_classes=COMMON["num_classes"])


def train_teacher(device):
    teacher = build("teacher").to(device)
    opt = torch.optim.SGD(teacher.parameters(), lr=STAGES["teacher"]["lr"], momentum=0.9, nesterov=True,
                          weight_decay=5e-5)
    teacher.train()
    for step, (x, y) in enumerate(loader_for("teacher")):
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.cross_entropy(teacher(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        print(f"[teacher] step {step} loss {loss.item():.3f}")
    return teacher, opt


def distill(teacher, device):
    T, alpha = COMMON["temperature"], COMMON["alpha"]
    teacher.eval()
    teacher.requires_grad_(False)
    student = build("student").to(device)
    opt = torch.optim.AdamW(student.parameters(), lr=STAGES["student"]["lr"], weight_decay=0.05, foreach=True)
    student.train()
    for step, (x, y) in enumerate(loader_for("student")):
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            with torch.no_grad():
                t_logits = teacher(x)
            s_logits = student(x)
            kd = F.kl_div(F.log_softmax(s_logits.float() / T, 1), F.softmax(t_logits.float() / T, 1),
                          reduction="batchmean") * T * T
            loss = alpha * kd + (1 - alpha) * F.cross_entropy(s_logits, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(student.parameters(), 5.0)
        opt.step()
        print(f"[student] step {step} loss {loss.item():.3f} (kd {kd.item():.3f})")
    return student


def main():
    device = torch.device("cuda")
    t0 = time.time()
    teacher, teacher_opt = train_teacher(device)
    student = distill(teacher, device)
    print(f"teacher {sum(p.numel() for p in teacher.parameters()):,} params, "
          f"student {sum(p.numel() for p in student.parameters()):,} params, {time.time() - t0:.0f}s")
    print("max alloc GiB", torch.cuda.max_memory_allocated() / 2**30)


if __name__ == "__main__":
    main()
