"""Action recognition on short clips with torchvision's MC3-18, fp16 AMP, and SWA at the end.

    python train_mc3_18_swa_clips.py --clip-shape 16 112 112 -b 24
"""
import argparse

import torch
import torch.nn as nn
from torch.optim.swa_utils import SWALR, AveragedModel, update_bn
from torch.utils.data import DataLoader, Dataset
from torchvision.models.video import mc3_18


def get_args():
    p = argparse.ArgumentParser("mc3_18 UCF-style training")
    p.add_argument("--clip-shape", nargs=3, type=int, default=[16, 112, 112], metavar=("T", "H", "W"),
                   help="frames, height, width of each clip")
    p.add_argument("-b", "--batch-size", type=int, default=24, dest="bs")
    p.add_argument("--num-classes", type=int, default=101)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--swa-lr", type=float, default=0.005)
    p.add_argument("--steps", type=int, default=4)
    p.add_argument("--swa-start", type=int, default=2)
    p.add_argument("--workers", type=int, default=4)
    return p.parse_args()


class RandomClips(Dataset):
    def __init__(self, n, t, h, w, num_classes):
        self.n, self.shape, self.k = n, (3, t, h, w), num_classes

    def __len__(self):
        return self.n

    def __getitem__(self, idx):
        clip = torch.randn(self.shape)
        return clip, torch.randint(0, self.k, ()).item()


def main():
    args = get_args()
    t, h, w = args.clip_shape
    device = "cuda"

    model = mc3_18(weights=None, num_classes=args.num_classes).to(device)
    swa_model = AveragedModel(model)

    train_ds = RandomClips(args.bs * args.steps, t, h, w, args.num_classes)
    train_loader = DataLoader(train_ds, batch_size=args.bs, shuffle=True, num_workers=args.workers,
                              drop_last=True, pin_memory=True)

    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=1e-4)
    swa_scheduler = SWALR(optimizer, swa_lr=args.swa_lr, anneal_epochs=1)
    scaler = torch.amp.GradScaler("cuda")

    model.train()
    for step, (clips, labels) in enumerate(train_loader):
        clips, labels = clips.to(device, non_blocking=True), labels.to(device, non_blocking=True)
        with torch.autocast("cuda", dtype=torch.float16):
            logits = model(clips)
            loss = criterion(logits, labels)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        if step >= args.swa_start:
            swa_model.update_parameters(model)
            swa_scheduler.step()
        print(f"step {step}: loss={loss.item():.4f}")

    # recompute BatchNorm statistics for the averaged weights
    bn_loader = DataLoader(RandomClips(args.bs * 2, t, h, w, args.num_classes), batch_size=args.bs)
    update_bn(bn_loader, swa_model, device=device)

    swa_model.eval()
    correct = total = 0
    with torch.no_grad():
        for clips, labels in bn_loader:
            out = swa_model(clips.to(device))
            correct += (out.argmax(1).cpu() == labels).sum().item()
            total += labels.numel()
    print(f"swa acc {correct / total:.3f}")


if __name__ == "__main__":
    main()
