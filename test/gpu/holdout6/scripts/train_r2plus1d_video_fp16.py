"""R(2+1)D-18 action recognition on 16-frame clips (Kinetics-400 sized head), fp16 AMP."""
import argparse

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset
from torchvision.models.video import r2plus1d_18


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--clip-len", type=int, default=16)
    p.add_argument("--crop", type=int, default=112)
    p.add_argument("--batch-size", type=int, default=12)
    p.add_argument("--num-classes", type=int, default=400)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--steps", type=int, default=6)
    return p.parse_args()


class ClipDataset(Dataset):
    """Returns (C, T, H, W) clips like torchvision's video transforms do."""

    def __init__(self, n, clip_len, crop, num_classes):
        self.n, self.clip_len, self.crop, self.num_classes = n, clip_len, crop, num_classes

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        clip = torch.rand(self.clip_len, self.crop, self.crop, 3)   # T, H, W, C as decoded
        clip = clip.permute(3, 0, 1, 2).contiguous()                 # -> C, T, H, W
        return clip, i % self.num_classes


def main():
    args = parse_args()
    model = r2plus1d_18(num_classes=args.num_classes).cuda()
    loader = DataLoader(ClipDataset(args.batch_size * args.steps, args.clip_len, args.crop, args.num_classes),
                        batch_size=args.batch_size, num_workers=2)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=1e-4)
    scaler = torch.amp.GradScaler()
    crit = nn.CrossEntropyLoss()
    model.train()
    for it, (clips, labels) in enumerate(loader):
        clips, labels = clips.cuda(non_blocking=True), labels.cuda(non_blocking=True)
        with torch.autocast(device_type="cuda", dtype=torch.float16):
            loss = crit(model(clips), labels)
        opt.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        print(it, round(loss.item(), 4), scaler.get_scale())


if __name__ == "__main__":
    main()
