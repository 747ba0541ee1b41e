#!/usr/bin/env python
"""EfficientNetV2 training recipe (RMSProp, AMP fp16) on a 200-class dataset.

Data here is synthetic uint8 images run through the usual torchvision v2 train transform.
"""
import argparse
import time

import torch
import torch.nn as nn
import torchvision
from torch.utils.data import DataLoader, Dataset
from torchvision.transforms import v2

MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)


def get_args_parser():
    parser = argparse.ArgumentParser(description="EfficientNetV2 classification training", add_help=True)
    parser.add_argument("--model", default="efficientnet_v2_s", type=str, help="torchvision model name")
    parser.add_argument("--num-classes", default=200, type=int)
    parser.add_argument("-b", "--batch-size", default=32, type=int, help="images per gpu")
    parser.add_argument("--train-crop-size", default=300, type=int)
    parser.add_argument("--stored-size", default=384, type=int, help="side of the stored images")
    parser.add_argument("--lr", default=0.016, type=float)
    parser.add_argument("--momentum", default=0.9, type=float)
    parser.add_argument("--wd", "--weight-decay", default=1e-5, type=float, dest="weight_decay")
    parser.add_argument("--label-smoothing", default=0.1, type=float)
    parser.add_argument("--amp", action="store_true", default=True)
    parser.add_argument("--iters", default=4, type=int, help="stop after this many iterations")
    parser.add_argument("--print-freq", default=1, type=int)
    return parser


class SyntheticImageFolder(Dataset):
    def __init__(self, n, size, num_classes, transform=None):
        self.n, self.size, self.num_classes, self.transform = n, size, num_classes, transform

    def __len__(self):
        return self.n

    def __getitem__(self, idx):
        img = torch.randint(0, 256, (3, self.size, self.size), dtype=torch.uint8)
        target = idx % self.num_classes
        if self.transform is not None:
            img = self.transform(img)
        return img, target


def train_one_epoch(model, criterion, optimizer, loader, scaler, args, device, max_iters):
    model.train()
    t0 = time.time()
    for i, (image, target) in enumerate(loader):
        image, target = image.to(device, non_blocking=True), target.to(device, non_blocking=True)
        with torch.autocast("cuda", dtype=torch.float16, enabled=args.amp):
            output = model(image)
            loss = criterion(output, target)
        optimizer.zero_grad()
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        else:
            loss.backward()
            optimizer.step()
        if i % args.print_freq == 0:
            print(f"[{i}] loss={loss.item():.4f} img/s={(i + 1) * image.size(0) / (time.time() - t0):.0f}")
        if i + 1 >= max_iters:
            break


def main(args):
    torch.backends.cudnn.benchmark = False
    device = torch.device("cuda")

    train_tf = v2.Compose([
        v2.RandomResizedCrop(args.train_crop_size, antialias=True),
        v2.RandomHorizontalFlip(),
        v2.ToDtype(torch.float32, scale=True),
        v2.Normalize(MEAN, STD),
    ])
    dataset = SyntheticImageFolder(args.batch_size * args.iters, args.stored_size, args.num_classes, train_tf)
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True, num_workers=4, pin_memory=True,
                        drop_last=True)

    model = torchvision.models.get_model(args.model, weights=None, num_classes=args.num_classes)
    model.to(device)

    criterion = nn.CrossEntropyLoss(label_smoothing=args.label_smoothing)
    optimizer = torch.optim.RMSprop(model.parameters(), lr=args.lr, alpha=0.9, eps=0.0316,
                                    momentum=args.momentum, weight_decay=args.weight_decay)
    scaler = torch.amp.GradScaler("cuda", init_scale=1024.0) if args.amp else None

    train_one_epoch(model, criterion, optimizer, loader, scaler, args, device, args.iters)
    if scaler is not None:
        print("final loss scale", scaler.get_scale())


if __name__ == "__main__":
    main(get_args_parser().parse_args())
