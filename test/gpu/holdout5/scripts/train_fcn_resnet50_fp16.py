"""Semantic segmentation (VOC-like, 21 classes) with torchvision's FCN-ResNet50, fp16 AMP."""
import argparse

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset
from torchvision.models.segmentation import fcn_resnet50

parser = argparse.ArgumentParser()
parser.add_argument("--batch-size", type=int, default=8)
parser.add_argument("--crop-size", type=int, default=480)
parser.add_argument("--num-classes", type=int, default=21)
parser.add_argument("--lr", type=float, default=0.02)
parser.add_argument("--iters", type=int, default=5)
parser.add_argument("--aux-loss", action="store_true", default=True)
args = parser.parse_args()


class RandomVOC(Dataset):
    def __init__(self, n, size, num_classes):
        self.n, self.size, self.num_classes = n, size, num_classes

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        img = torch.randn(3, self.size, self.size)
        mask = torch.randint(0, self.num_classes, (self.size, self.size))
        mask[:8] = 255  # "void" border
        return img, mask


def criterion(outputs, target):
    losses = {name: nn.functional.cross_entropy(x, target, ignore_index=255) for name, x in outputs.items()}
    if len(losses) == 1:
        return losses["out"]
    return losses["out"] + 0.5 * losses["aux"]


model = fcn_resnet50(weights=None, weights_backbone=None, num_classes=args.num_classes, aux_loss=args.aux_loss)
model.cuda()

params_to_optimize = [
    {"params": [p for p in model.backbone.parameters() if p.requires_grad]},
    {"params": [p for p in model.classifier.parameters() if p.requires_grad]},
]
if args.aux_loss:
    params_to_optimize.append({"params": [p for p in model.aux_classifier.parameters() if p.requires_grad],
                               "lr": args.lr * 10})
optimizer = torch.optim.SGD(params_to_optimize, lr=args.lr, momentum=0.9, weight_decay=1e-4)
lr_scheduler = torch.optim.lr_scheduler.PolynomialLR(optimizer, total_iters=args.iters, power=0.9)
scaler = torch.amp.GradScaler("cuda")

loader = DataLoader(RandomVOC(args.batch_size * args.iters, args.crop_size, args.num_classes),
                    batch_size=args.batch_size, shuffle=True, num_workers=4, drop_last=True)

model.train()
for i, (image, target) in enumerate(loader):
    image, target = image.cuda(), target.cuda()
    with torch.autocast("cuda", dtype=torch.float16):
        output = model(image)
        loss = criterion(output, target)
    optimizer.zero_grad()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    lr_scheduler.step()
    print(f"iter {i} loss {loss.item():.4f} lr {optimizer.param_groups[0]['lr']:.5f}")
