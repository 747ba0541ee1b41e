"""Faster R-CNN (ResNet-50 FPN v2) on a warehouse-pallet dataset, torchvision-reference style loop.

    python train_fasterrcnn_v2_argparse.py --imgs-per-batch 4 --num-classes 8
"""
import argparse
import math
import time

import torch
import torchvision
from torch.utils.data import DataLoader, Dataset
from torchvision.models.detection import fasterrcnn_resnet50_fpn_v2


def parse():
    ap = argparse.ArgumentParser()
    ap.add_argument("--imgs-per-batch", type=int, default=4, dest="batch_size")
    ap.add_argument("--num-classes", type=int, default=8, help="including background")
    ap.add_argument("--height", type=int, default=512)
    ap.add_argument("--width", type=int, default=683)
    ap.add_argument("--max-boxes", type=int, default=20)
    ap.add_argument("--lr", type=float, default=0.02)
    ap.add_argument("--iters", type=int, default=10, dest="max_iters")
    ap.add_argument("--workers", type=int, default=2)
    return ap.parse_args()


class Pallets(Dataset):
    def __init__(self, n, h, w, num_classes, max_boxes):
        self.n, self.h, self.w, self.nc, self.max_boxes = n, h, w, num_classes, max_boxes

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        img = torch.rand(3, self.h, self.w)
        k = int(torch.randint(3, self.max_boxes + 1, ()))
        x1 = torch.rand(k) * (self.w - 64)
        y1 = torch.rand(k) * (self.h - 64)
        bw = 16 + torch.rand(k) * (self.w / 3)
        bh = 16 + torch.rand(k) * (self.h / 3)
        boxes = torch.stack([x1, y1, (x1 + bw).clamp(max=self.w - 1), (y1 + bh).clamp(max=self.h - 1)], 1)
        labels = torch.randint(1, self.nc, (k,))
        return img, {"boxes": boxes, "labels": labels}


def collate_fn(batch):
    return tuple(zip(*batch))


def main():
    args = parse()
    device = torch.device("cuda")
    model = fasterrcnn_resnet50_fpn_v2(weights=None, weights_backbone=None, num_classes=args.num_classes)
    model.to(device)

    ds = Pallets(args.batch_size * args.max_iters, args.height, args.width, args.num_classes, args.max_boxes)
    loader = DataLoader(ds, batch_size=args.batch_size, shuffle=True, num_workers=args.workers,
                        collate_fn=collate_fn)

    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.SGD(params, lr=args.lr, momentum=0.9, weight_decay=1e-4)
    warmup = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=0.001, total_iters=5)

    model.train()
    t0 = time.time()
    for it, (images, targets) in enumerate(loader):
        images = [img.to(device) for img in images]
        targets = [{k: v.to(device) for k, v in t.items()} for t in targets]
        loss_dict = model(images, targets)
        losses = sum(loss for loss in loss_dict.values())
        if not math.isfinite(losses.item()):
            print("non-finite loss, stopping", loss_dict)
            break
        optimizer.zero_grad()
        losses.backward()
        optimizer.step()
        warmup.step()
        print(f"iter {it} loss {losses.item():.3f} " +
              " ".join(f"{k}={v.item():.3f}" for k, v in loss_dict.items()))

    model.eval()
    with torch.no_grad():
        dets = model(images)
    print("detections per image:", [len(d["boxes"]) for d in dets])
    print(f"{time.time() - t0:.1f}s, peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
