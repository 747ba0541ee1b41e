#!/usr/bin/env python3
"""timm ViT-S/16 trained at 320 px (pos-embed resized by timm: 20x20 patches), compiled with torch.compile,
bf16 autocast, fused AdamW, mixup-free soft-target loss."""
import argparse
import time

import timm
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


def get_parser():
    p = argparse.ArgumentParser("vit training", add_help=True)
    p.add_argument("--model", default="vit_small_patch16_224", type=str)
    p.add_argument("--input-size", default=320, type=int, help="images input size")
    p.add_argument("--batch-size", default=128, type=int)
    p.add_argument("--nb-classes", default=1000, type=int, dest="num_classes")
    p.add_argument("--drop-path", default=0.1, type=float)
    p.add_argument("--lr", default=1e-3, type=float)
    p.add_argument("--weight-decay", default=0.05, type=float)
    p.add_argument("--steps", default=5, type=int)
    p.add_argument("--no-compile", action="store_false", dest="compile")
    return p


class RandomImages(Dataset):
    def __init__(self, n, size, num_classes):
        self.n, self.size, self.num_classes = n, size, num_classes

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.randn(3, self.size, self.size), torch.randint(0, self.num_classes, ()).item()


def main(args):
    device = "cuda"
    model = timm.create_model(args.model, pretrained=False, img_size=args.input_size,
                              num_classes=args.num_classes, drop_path_rate=args.drop_path)
    model.to(device)
    n_parameters = sum(p.numel() for p in model.parameters() if p.requires_grad)
    print("number of params:", n_parameters)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=args.weight_decay, fused=True)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    train_model = torch.compile(model) if args.compile else model

    loader = DataLoader(RandomImages(args.batch_size * args.steps, args.input_size, args.num_classes),
                        batch_size=args.batch_size, num_workers=4, pin_memory=True, drop_last=True)
    model.train()
    for it, (samples, targets) in enumerate(loader):
        t0 = time.time()
        samples = samples.to(device, non_blocking=True)
        targets = targets.to(device, non_blocking=True)
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            outputs = train_model(samples)
            loss = criterion(outputs, targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        torch.cuda.synchronize()
        print(f"it {it} loss {loss.item():.4f} {time.time() - t0:.2f}s")
    print(f"Max memory: {torch.cuda.max_memory_allocated() / 1024 ** 3:.2f} GiB")


if __name__ == "__main__":
    main(get_parser().parse_args())
