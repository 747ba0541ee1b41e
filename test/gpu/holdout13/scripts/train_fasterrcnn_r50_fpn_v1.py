"""Faster R-CNN (ResNet-50 FPN, v1) on a warehouse-boxes dataset.

    python train_fasterrcnn_r50_fpn_v1.py train --batch-size 4 --epochs 1
    python train_fasterrcnn_r50_fpn_v1.py predict --batch-size 8
"""
import argparse
import sys

import torch
from torch.utils.data import DataLoader, Dataset
from torchvision.models.detection import fasterrcnn_resnet50_fpn

NUM_CLASSES = 11  # 10 SKUs + background


class BoxesDataset(Dataset):
    def __init__(self, n, height=600, width=800, max_objects=12):
        self.n, self.h, self.w, self.max_objects = n, height, width, max_objects

    def __len__(self):
        return self.n

    def __getitem__(self, idx):
        g = torch.Generator().manual_seed(idx)
        img = torch.rand(3, self.h, self.w, generator=g)
        k = int(torch.randint(1, self.max_objects + 1, (1,), generator=g))
        xy = torch.rand(k, 2, generator=g) * torch.tensor([self.w - 64, self.h - 64])
        wh = 16 + torch.rand(k, 2, generator=g) * 200
        boxes = torch.cat([xy, torch.minimum(xy + wh, torch.tensor([self.w, self.h]))], dim=1)
        labels = torch.randint(1, NUM_CLASSES, (k,), generator=g)
        return img, {"boxes": boxes, "labels": labels}


def collate(batch):
    return tuple(zip(*batch))


def build_model():
    return fasterrcnn_resnet50_fpn(weights=None, weights_backbone=None, num_classes=NUM_CLASSES)


def cmd_train(args):
    device = torch.device("cuda")
    model = build_model().to(device)
    loader = DataLoader(BoxesDataset(args.batch_size * args.steps), batch_size=args.batch_size,
                        shuffle=True, num_workers=args.workers, collate_fn=collate)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.SGD(params, lr=args.lr, momentum=0.9, weight_decay=1e-4)
    warmup = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=0.001, total_iters=len(loader))

    for epoch in range(args.epochs):
        model.train()
        for i, (images, targets) in enumerate(loader):
            images = [im.to(device) for im in images]
            targets = [{k: v.to(device) for k, v in t.items()} for t in targets]
            loss_dict = model(images, targets)
            losses = sum(loss for loss in loss_dict.values())
            optimizer.zero_grad()
            losses.backward()
            optimizer.step()
            warmup.step()
            print(f"[{epoch}:{i}] total {losses.item():.3f} " +
                  " ".join(f"{k}={v.item():.3f}" for k, v in loss_dict.items()))
    print("max mem (GiB):", torch.cuda.max_memory_allocated() / 1024 ** 3)


def cmd_predict(args):
    device = torch.device("cuda")
    model = build_model().to(device).eval()
    loader = DataLoader(BoxesDataset(args.batch_size * 2), batch_size=args.batch_size, collate_fn=collate)
    with torch.no_grad():
        for images, _ in loader:
            out = model([im.to(device) for im in images])
            print([len(o["boxes"]) for o in out])


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    tr = sub.add_parser("train")
    tr.add_argument("--batch-size", type=int, default=4)
    tr.add_argument("--epochs", type=int, default=1)
    tr.add_argument("--steps", type=int, default=6)
    tr.add_argument("--lr", type=float, default=0.01)
    tr.add_argument("--workers", type=int, default=4)
    tr.set_defaults(func=cmd_train)
    pr = sub.add_parser("predict")
    pr.add_argument("--batch-size", type=int, default=8)
    pr.set_defaults(func=cmd_predict)
    args = parser.parse_args(sys.argv[1:] or ["train"])
    args.func(args)


if __name__ == "__main__":
    main()
