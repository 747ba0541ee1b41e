"""Train torchvision's Faster R-CNN (MobileNetV3-Large FPN backbone) on a synthetic detection set.

Images come in at 480x640 and the model's GeneralizedRCNNTransform resizes them (min_size=800, max_size=1333),
so the backbone sees 800x1066 padded to a multiple of 32.
"""
import argparse
import random

import torch
import torchvision
from torch.utils.data import DataLoader, Dataset
from torchvision.models.detection import fasterrcnn_mobilenet_v3_large_fpn


def parse_args():
    parser = argparse.ArgumentParser(description="Faster R-CNN training")
    parser.add_argument("--batch-size", "-b", type=int, default=16)
    parser.add_argument("--height", type=int, default=480)
    parser.add_argument("--width", type=int, default=640)
    parser.add_argument("--num-classes", type=int, default=21, help="20 VOC classes + background")
    parser.add_argument("--max-boxes", type=int, default=12)
    parser.add_argument("--lr", type=float, default=0.02)
    parser.add_argument("--iters", type=int, default=4)
    parser.add_argument("--workers", type=int, default=2)
    return parser.parse_args()


class SyntheticDetection(Dataset):
    def __init__(self, n, h, w, num_classes, max_boxes):
        self.n, self.h, self.w = n, h, w
        self.num_classes, self.max_boxes = num_classes, max_boxes

    def __len__(self):
        return self.n

    def __getitem__(self, idx):
        img = torch.rand(3, self.h, self.w)
        k = random.randint(1, self.max_boxes)
        xy = torch.rand(k, 2) * torch.tensor([self.w * 0.7, self.h * 0.7])
        wh = torch.rand(k, 2) * torch.tensor([self.w * 0.3, self.h * 0.3]) + 8
        boxes = torch.cat([xy, xy + wh], dim=1)
        labels = torch.randint(1, self.num_classes, (k,))
        return img, {"boxes": boxes, "labels": labels}


def collate_fn(batch):
    return tuple(zip(*batch))


def main():
    args = parse_args()
    device = torch.device("cuda")
    model = fasterrcnn_mobilenet_v3_large_fpn(weights=None, weights_backbone=None, num_classes=args.num_classes)
    model.to(device)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.SGD(params, lr=args.lr, momentum=0.9, weight_decay=1e-4)
    warmup = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=0.001, total_iters=args.iters)

    dataset = SyntheticDetection(args.batch_size * args.iters, args.height, args.width, args.num_classes,
                                 args.max_boxes)
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True, num_workers=args.workers,
                        collate_fn=collate_fn)
    model.train()
    for it, (images, targets) in enumerate(loader):
        images = [img.to(device) for img in images]
        targets = [{k: v.to(device) for k, v in t.items()} for t in targets]
        loss_dict = model(images, targets)
        losses = sum(loss for loss in loss_dict.values())
        optimizer.zero_grad()
        losses.backward()
        optimizer.step()
        warmup.step()
        print(f"iter {it} loss {losses.item():.3f} " + " ".join(f"{k}={v.item():.3f}" for k, v in loss_dict.items()))
    print(f"torchvision {torchvision.__version__} peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
