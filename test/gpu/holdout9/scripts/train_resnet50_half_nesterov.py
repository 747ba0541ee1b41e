"""Fast low-resolution ResNet-50 training with the whole network in fp16 (`model.half()`), no autocast and
no loss scaling; channels_last; SGD with Nesterov momentum. The loss is computed on fp32 logits.

    python train_resnet50_half_nesterov.py --arch resnet50 --bs 256 --res 160
"""
import argparse
import time

import torch
import torch.nn as nn
import torchvision
from torch.utils.data import DataLoader, Dataset


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--arch", default="resnet50")
    p.add_argument("--bs", type=int, default=256, dest="batch_size")
    p.add_argument("--res", type=int, default=160, dest="image_size")
    p.add_argument("--classes", type=int, default=1000, dest="num_classes")
    p.add_argument("--lr", type=float, default=0.2)
    p.add_argument("--wd", type=float, default=5e-5, dest="weight_decay")
    p.add_argument("--steps", type=int, default=12)
    return p.parse_args()


class Synthetic(Dataset):
    def __init__(self, n, res, num_classes):
        self.n, self.res, self.num_classes = n, res, num_classes

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.randn(3, self.res, self.res), i % self.num_classes


def main():
    args = get_args()
    device = torch.device("cuda")
    model = getattr(torchvision.models, args.arch)(num_classes=args.num_classes)
    model = model.to(device).half().to(memory_format=torch.channels_last)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, nesterov=True,
                                weight_decay=args.weight_decay)
    scheduler = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=0.1, total_iters=args.steps)
    loader = DataLoader(Synthetic(args.batch_size * args.steps, args.image_size, args.num_classes),
                        batch_size=args.batch_size, shuffle=True, num_workers=8, pin_memory=True, drop_last=True)

    model.train()
    t0 = time.time()
    for step, (x, y) in enumerate(loader):
        x = x.to(device, non_blocking=True).half().contiguous(memory_format=torch.channels_last)
        y = y.to(device, non_blocking=True)
        logits = model(x)
        loss = criterion(logits.float(), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        scheduler.step()
        print(f"step {step} loss {loss.item():.3f}")
    print(f"{time.time() - t0:.1f}s, peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
