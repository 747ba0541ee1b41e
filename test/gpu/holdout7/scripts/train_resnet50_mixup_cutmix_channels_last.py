"""ResNet-50 ImageNet-style recipe: MixUp / CutMix from torchvision.transforms.v2 applied on the GPU batch,
label smoothing, SGD + nesterov, linear-warmup-then-cosine LR (SequentialLR), channels_last and bf16 autocast.
"""
import argparse

import torch
import torch.nn as nn
import torchvision
from torch.utils.data import DataLoader, Dataset
from torchvision.transforms import v2


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--arch", default="resnet50")
    p.add_argument("-b", "--batch-size", type=int, default=256, dest="batch_size")
    p.add_argument("--num-classes", type=int, default=1000)
    p.add_argument("--train-crop-size", type=int, default=176)
    p.add_argument("--lr", type=float, default=0.5)
    p.add_argument("--label-smoothing", type=float, default=0.1)
    p.add_argument("--mixup-alpha", type=float, default=0.2)
    p.add_argument("--cutmix-alpha", type=float, default=1.0)
    p.add_argument("--steps", type=int, default=5)
    return p.parse_args()


class RandomCrops(Dataset):
    def __init__(self, n, size, num_classes):
        self.n, self.size, self.num_classes = n, size, num_classes
        self.bank = torch.randn(128, 3, size, size)

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return self.bank[i % 128], i % self.num_classes


def main():
    args = get_args()
    model = torchvision.models.get_model(args.arch, weights=None, num_classes=args.num_classes)
    model = model.cuda().to(memory_format=torch.channels_last)
    params_bn = [p for n, p in model.named_parameters() if "bn" in n or "downsample.1" in n]
    params_rest = [p for n, p in model.named_parameters() if not ("bn" in n or "downsample.1" in n)]
    optimizer = torch.optim.SGD([{"params": params_rest, "weight_decay": 2e-5}, {"params": params_bn, "weight_decay": 0.0}],
                                lr=args.lr, momentum=0.9, nesterov=True)
    warm = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=0.01, total_iters=2)
    cos = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.steps - 2)
    scheduler = torch.optim.lr_scheduler.SequentialLR(optimizer, [warm, cos], milestones=[2])
    mix = v2.RandomChoice([v2.MixUp(alpha=args.mixup_alpha, num_classes=args.num_classes),
                           v2.CutMix(alpha=args.cutmix_alpha, num_classes=args.num_classes)])
    criterion = nn.CrossEntropyLoss(label_smoothing=args.label_smoothing)
    loader = DataLoader(RandomCrops(args.batch_size * args.steps, args.train_crop_size, args.num_classes),
                        batch_size=args.batch_size, shuffle=True, num_workers=4, pin_memory=True, drop_last=True)
    model.train()
    for step, (images, target) in enumerate(loader):
        images = images.cuda(non_blocking=True).to(memory_format=torch.channels_last)
        target = target.cuda(non_blocking=True)
        images, target = mix(images, target)          # soft targets (B, num_classes)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            output = model(images)
            loss = criterion(output, target)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        scheduler.step()
        print(f"step {step} loss {loss.item():.4f} lr {scheduler.get_last_lr()[0]:.4f}")


if __name__ == "__main__":
    main()
