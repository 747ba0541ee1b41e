"""Train torchvision's FCOS (ResNet-50-FPN) on a synthetic detection set.

Images are variable-sized (480..640 px), boxes random; the model's transform resizes them so the short side is
800 (max 1333) and batches them. Loss dict summed, SGD with warmup, gradient clipping.
"""
import random

import torch
from torch.utils.data import DataLoader, Dataset
from torchvision.models.detection import fcos_resnet50_fpn

NUM_CLASSES = 81
BATCH_SIZE = 8
ITERS = 5


class RandomDetection(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, idx):
        h, w = random.randint(480, 640), random.randint(480, 640)
        img = torch.rand(3, h, w)
        k = random.randint(3, 20)
        xy = torch.rand(k, 2) * torch.tensor([w * 0.7, h * 0.7])
        wh = torch.rand(k, 2) * torch.tensor([w * 0.3, h * 0.3]) + 8
        boxes = torch.cat([xy, xy + wh], dim=1)
        labels = torch.randint(1, NUM_CLASSES, (k,))
        return img, {"boxes": boxes, "labels": labels}


def collate_fn(batch):
    return tuple(zip(*batch))


model = fcos_resnet50_fpn(weights=None, weights_backbone=None, num_classes=NUM_CLASSES)
model.cuda().train()
params = [p for p in model.parameters() if p.requires_grad]
optimizer = torch.optim.SGD(params, lr=0.01, momentum=0.9, weight_decay=1e-4)
warmup = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=0.001, total_iters=ITERS)
loader = DataLoader(RandomDetection(BATCH_SIZE * ITERS), batch_size=BATCH_SIZE, shuffle=True,
                    collate_fn=collate_fn, num_workers=4)

for it, (images, targets) in enumerate(loader):
    images = [img.cuda() for img in images]
    targets = [{k: v.cuda() for k, v in t.items()} for t in targets]
    loss_dict = model(images, targets)
    losses = sum(loss for loss in loss_dict.values())
    optimizer.zero_grad()
    losses.backward()
    torch.nn.utils.clip_grad_norm_(params, 10.0)
    optimizer.step()
    warmup.step()
    print(it, {k: round(v.item(), 3) for k, v in loss_dict.items()})
