"""Person keypoint detection (COCO-style, 17 keypoints) with torchvision's Keypoint R-CNN.

Follows the structure of torchvision's detection reference: train_one_epoch() with a linear warm-up, the model
returns a dict of losses in train mode. Images are 480x640; the model's transform resizes them (min_size=640).
"""
import math
import sys
import time

import torch
from torch.utils.data import DataLoader, Dataset
from torchvision.models.detection import keypointrcnn_resnet50_fpn

NUM_KEYPOINTS = 17


class FakePersonKeypoints(Dataset):
    def __init__(self, n, height=480, width=640, max_people=6):
        self.n, self.h, self.w, self.max_people = n, height, width, max_people

    def __len__(self):
        return self.n

    def __getitem__(self, idx):
        img = torch.rand(3, self.h, self.w)
        n = int(torch.randint(1, self.max_people + 1, ()))
        x1 = torch.rand(n) * (self.w - 120)
        y1 = torch.rand(n) * (self.h - 240)
        bw = 60 + torch.rand(n) * 60
        bh = 120 + torch.rand(n) * 120
        boxes = torch.stack([x1, y1, x1 + bw, y1 + bh], dim=1)
        kx = x1[:, None] + torch.rand(n, NUM_KEYPOINTS) * bw[:, None]
        ky = y1[:, None] + torch.rand(n, NUM_KEYPOINTS) * bh[:, None]
        vis = torch.full((n, NUM_KEYPOINTS), 2.0)
        keypoints = torch.stack([kx, ky, vis], dim=2)
        target = {"boxes": boxes, "labels": torch.ones(n, dtype=torch.int64), "keypoints": keypoints}
        return img, target


def collate_fn(batch):
    return tuple(zip(*batch))


def train_one_epoch(model, optimizer, data_loader, device, epoch, print_freq=2, max_iters=None):
    model.train()
    lr_scheduler = None
    if epoch == 0:
        warmup_factor = 1.0 / 1000
        warmup_iters = min(1000, len(data_loader) - 1)
        lr_scheduler = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=warmup_factor,
                                                         total_iters=warmup_iters)
    start = time.time()
    for i, (images, targets) in enumerate(data_loader):
        images = [img.to(device) for img in images]
        targets = [{k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in t.items()} for t in targets]
        loss_dict = model(images, targets)
        losses = sum(loss for loss in loss_dict.values())
        loss_value = losses.item()
        if not math.isfinite(loss_value):
            print(f"Loss is {loss_value}, stopping training")
            print(loss_dict)
            sys.exit(1)
        optimizer.zero_grad()
        losses.backward()
        optimizer.step()
        if lr_scheduler is not None:
            lr_scheduler.step()
        if i % print_freq == 0:
            parts = " ".join(f"{k}={v.item():.3f}" for k, v in loss_dict.items())
            print(f"Epoch [{epoch}] [{i}/{len(data_loader)}] loss={loss_value:.3f} {parts} "
                  f"time={time.time() - start:.1f}s")
        if max_iters is not None and i + 1 >= max_iters:
            break


def main():
    device = torch.device("cuda")
    batch_size = 4
    epochs = 1
    iters_per_epoch = 6

    dataset = FakePersonKeypoints(batch_size * iters_per_epoch)
    loader = DataLoader(dataset, batch_size=batch_size, shuffle=True, num_workers=2, collate_fn=collate_fn)

    model = keypointrcnn_resnet50_fpn(weights=None, weights_backbone=None, num_classes=2,
                                      num_keypoints=NUM_KEYPOINTS, min_size=640, max_size=1066)
    model.to(device)

    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.SGD(params, lr=0.02, momentum=0.9, weight_decay=1e-4)
    lr_scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[36, 43], gamma=0.1)

    for epoch in range(epochs):
        train_one_epoch(model, optimizer, loader, device, epoch, max_iters=iters_per_epoch)
        lr_scheduler.step()

    print("max_memory_allocated: %.2f GiB" % (torch.cuda.max_memory_allocated() / 2 ** 30))


if __name__ == "__main__":
    main()
