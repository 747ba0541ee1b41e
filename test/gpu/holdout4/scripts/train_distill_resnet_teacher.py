"""Knowledge distillation: a frozen ResNet-101 teacher (eval mode, no grad) and a ResNet-18 student trained with
KL(student/T || teacher/T) * T^2 plus cross-entropy. fp16 autocast with one GradScaler."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from torchvision import models


class Cfg:
    num_classes = 200
    image_size = 224
    batch_size = 160
    epochs = 1
    steps_per_epoch = 4
    lr = 0.1
    momentum = 0.9
    weight_decay = 5e-4
    temperature = 4.0
    alpha = 0.7           # weight of the distillation term
    teacher_arch = "resnet101"
    student_arch = "resnet18"


class RandomImageNetSubset(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.randn(3, Cfg.image_size, Cfg.image_size), torch.randint(0, Cfg.num_classes, ()).item()


def make(arch):
    # zero_init_residual: every residual branch starts as identity (keeps a fresh fp16 teacher finite)
    return getattr(models, arch)(weights=None, num_classes=Cfg.num_classes, zero_init_residual=True)


def distill_loss(student_logits, teacher_logits, labels):
    T = Cfg.temperature
    kd = F.kl_div(F.log_softmax(student_logits / T, dim=1), F.softmax(teacher_logits / T, dim=1),
                  reduction="batchmean") * T * T
    ce = F.cross_entropy(student_logits, labels)
    return Cfg.alpha * kd + (1 - Cfg.alpha) * ce


def train_one_epoch(student, teacher, loader, optimizer, scaler, epoch):
    student.train()
    for i, (images, labels) in enumerate(loader):
        images, labels = images.cuda(non_blocking=True), labels.cuda(non_blocking=True)
        with torch.autocast("cuda", dtype=torch.float16):
            with torch.no_grad():
                t_logits = teacher(images)
            s_logits = student(images)
            loss = distill_loss(s_logits.float(), t_logits.float(), labels)
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        print(f"epoch {epoch} iter {i} loss {loss.item():.4f}")
        if i + 1 >= Cfg.steps_per_epoch:
            break


def main():
    teacher = make(Cfg.teacher_arch).cuda().eval()
    # teacher.load_state_dict(torch.load("teacher_r101.pth"))  # real runs load the trained teacher
    for p in teacher.parameters():
        p.requires_grad_(False)
    student = make(Cfg.student_arch).cuda()
    optimizer = torch.optim.SGD(student.parameters(), lr=Cfg.lr, momentum=Cfg.momentum,
                                weight_decay=Cfg.weight_decay)
    scaler = torch.amp.GradScaler("cuda", init_scale=256.0)
    loader = DataLoader(RandomImageNetSubset(Cfg.batch_size * Cfg.steps_per_epoch), batch_size=Cfg.batch_size,
                        shuffle=True, num_workers=4, pin_memory=True)
    for epoch in range(Cfg.epochs):
        train_one_epoch(student, teacher, loader, optimizer, scaler, epoch)
    print("scale", scaler.get_scale())
    print("peak %.2f GiB" % (torch.cuda.max_memory_allocated() / 2**30))


if __name__ == "__main__":
    main()
