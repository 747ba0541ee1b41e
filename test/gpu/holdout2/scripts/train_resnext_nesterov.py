"""Low-resolution ResNeXt pre-training (FixRes style: train at 192, evaluate at 224)."""
import json
import os
import sys

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset
from torchvision import models
from torchvision.transforms import v2

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIG_PATH = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "configs", "resnext_sgd.json")

with open(CONFIG_PATH) as f:
    cfg = json.load(f)

torch.backends.cudnn.benchmark = False
torch.backends.cudnn.deterministic = False


class FakeImageNet(Dataset):
    def __init__(self, length, stored, transform):
        self.length = length
        self.stored = stored
        self.transform = transform

    def __len__(self):
        return self.length

    def __getitem__(self, i):
        img = torch.randint(0, 256, (3, self.stored, self.stored), dtype=torch.uint8)
        return self.transform(img), i % 1000


normalize = v2.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])
train_tf = v2.Compose([v2.RandomResizedCrop(cfg["train_crop"], antialias=True), v2.RandomHorizontalFlip(),
                       v2.ToDtype(torch.float32, scale=True), normalize])
val_tf = v2.Compose([v2.Resize(cfg["val_resize"], antialias=True), v2.CenterCrop(cfg["val_crop"]),
                     v2.ToDtype(torch.float32, scale=True), normalize])

train_loader = DataLoader(FakeImageNet(cfg["batch_size"] * cfg["iters"], cfg["stored_size"], train_tf),
                          batch_size=cfg["batch_size"], shuffle=True, num_workers=cfg["workers"], drop_last=True)
val_loader = DataLoader(FakeImageNet(cfg["batch_size"] * cfg["val_batches"], cfg["stored_size"], val_tf),
                        batch_size=cfg["batch_size"], num_workers=cfg["workers"])

model = models.__dict__[cfg["arch"]](weights=None, num_classes=cfg["num_classes"])
memory_format = torch.channels_last if cfg["channels_last"] else torch.contiguous_format
model = model.cuda().to(memory_format=memory_format)

# no weight decay on BN / bias
decay, no_decay = [], []
for name, p in model.named_parameters():
    (no_decay if p.ndim <= 1 else decay).append(p)
opt_cfg = cfg["optimizer"]
optimizer = torch.optim.SGD(
    [{"params": decay, "weight_decay": opt_cfg["weight_decay"]}, {"params": no_decay, "weight_decay": 0.0}],
    lr=opt_cfg["lr"], momentum=opt_cfg["momentum"], nesterov=opt_cfg["nesterov"])
warmup = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=0.1, total_iters=cfg["warmup_iters"])
criterion = nn.CrossEntropyLoss()


def train_one_epoch(epoch):
    model.train()
    for it, (images, target) in enumerate(train_loader):
        images = images.cuda(non_blocking=True).contiguous(memory_format=memory_format)
        target = target.cuda(non_blocking=True)
        output = model(images)
        loss = criterion(output, target)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        warmup.step()
        print(f"epoch {epoch} it {it} loss {loss.item():.3f} lr {optimizer.param_groups[0]['lr']:.4f}")


def validate():
    model.eval()
    top1 = n = 0
    with torch.no_grad():
        for images, target in val_loader:
            images = images.cuda(non_blocking=True).contiguous(memory_format=memory_format)
            out = model(images)
            top1 += (out.argmax(1).cpu() == target).sum().item()
            n += target.numel()
    return 100.0 * top1 / n


for epoch in range(1):
    train_one_epoch(epoch)
    print(f"val@{cfg['val_crop']}: {validate():.2f}%")
