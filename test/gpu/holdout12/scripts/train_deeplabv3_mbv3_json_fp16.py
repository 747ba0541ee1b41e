"""Semantic segmentation (Cityscapes-like crops) with torchvision DeepLabV3-MobileNetV3-Large.

Settings in configs/seg_cityscapes_mbv3.json (opened relative to the working directory).
fp16 autocast + GradScaler, poly LR, aux loss weighted 0.5.
"""
import json

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset
from torchvision.models import segmentation

with open("configs/seg_cityscapes_mbv3.json") as fh:
    cfg = json.load(fh)


class RandomCityscapes(Dataset):
    def __init__(self, n, crop, num_classes, ignore_index):
        self.n, self.crop, self.num_classes, self.ignore = n, crop, num_classes, ignore_index

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        h, w = self.crop
        img = torch.randn(3, h, w)
        mask = torch.randint(0, self.num_classes, (h, w))
        mask[torch.rand(h, w) < 0.05] = self.ignore
        return img, mask


model = segmentation.__dict__[cfg["model"]](weights=None, weights_backbone=None,
                                             num_classes=cfg["num_classes"], aux_loss=cfg["aux_loss"])
model = model.cuda()
params = [
    {"params": [p for p in model.backbone.parameters() if p.requires_grad]},
    {"params": [p for p in model.classifier.parameters() if p.requires_grad]},
    {"params": [p for p in model.aux_classifier.parameters() if p.requires_grad], "lr": cfg["lr"] * 10},
]
optimizer = torch.optim.SGD(params, lr=cfg["lr"], momentum=cfg["momentum"], weight_decay=cfg["weight_decay"])
scheduler = torch.optim.lr_scheduler.PolynomialLR(optimizer, total_iters=cfg["max_iters"], power=0.9)
criterion = nn.CrossEntropyLoss(ignore_index=cfg["ignore_index"])
scaler = torch.amp.GradScaler("cuda")

ds = RandomCityscapes(cfg["batch_size"] * cfg["max_iters"], cfg["crop_size"], cfg["num_classes"],
                      cfg["ignore_index"])
loader = DataLoader(ds, batch_size=cfg["batch_size"], shuffle=True, num_workers=4, pin_memory=True,
                    drop_last=True)

model.train()
for it, (image, target) in enumerate(loader):
    image, target = image.cuda(non_blocking=True), target.cuda(non_blocking=True)
    with torch.autocast("cuda", dtype=torch.float16):
        output = model(image)
        loss = criterion(output["out"], target) + 0.5 * criterion(output["aux"], target)
    optimizer.zero_grad()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    scheduler.step()
    print(f"iter {it + 1}/{cfg['max_iters']}  loss {loss.item():.4f}")

print(f"max memory allocated: {torch.cuda.max_memory_allocated() / 2 ** 30:.2f} GiB")
