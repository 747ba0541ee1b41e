"""RetinaNet (ResNet-50-FPN v2) detection training in the style of torchvision's references/detection,
with --amp (fp16 autocast + GradScaler) and a linear warmup."""
import argparse
import math
import sys
import time

import torch
import torchvision
from torch.utils.data import DataLoader, Dataset


def get_args_parser():
    parser = argparse.ArgumentParser(description="PyTorch Detection Training", add_help=True)
    parser.add_argument("--model", default="retinanet_resnet50_fpn_v2", type=str)
    parser.add_argument("--device", default="cuda", type=str)
    parser.add_argument("-b", "--batch-size", default=8, type=int, help="images per gpu")
    parser.add_argument("--epochs", default=1, type=int)
    parser.add_argument("-j", "--workers", default=4, type=int)
    parser.add_argument("--lr", default=0.01, type=float)
    parser.add_argument("--momentum", default=0.9, type=float)
    parser.add_argument("--wd", "--weight-decay", default=1e-4, type=float, dest="weight_decay")
    parser.add_argument("--num-classes", default=91, type=int)
    parser.add_argument("--iters", default=4, type=int)
    parser.add_argument("--amp", action="store_true", default=True)
    return parser


class FakeCoco(Dataset):
    def __init__(self, n, num_classes):
        self.n, self.num_classes = n, num_classes

    def __len__(self):
        return self.n

    def __getitem__(self, idx):
        h, w = 480, 640
        img = torch.rand(3, h, w)
        k = torch.randint(1, 20, ()).item()
        xy = torch.rand(k, 2) * torch.tensor([w - 100.0, h - 100.0])
        wh = torch.rand(k, 2) * 90 + 10
        target = {"boxes": torch.cat([xy, xy + wh], 1), "labels": torch.randint(1, self.num_classes, (k,)),
                  "image_id": idx}
        return img, target


def collate_fn(batch):
    return tuple(zip(*batch))


def train_one_epoch(model, optimizer, data_loader, device, epoch, print_freq, scaler=None):
    model.train()
    lr_scheduler = None
    if epoch == 0:
        warmup_factor = 1.0 / 1000
        warmup_iters = min(1000, len(data_loader) - 1)
        lr_scheduler = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=warmup_factor, total_iters=warmup_iters)
    t0 = time.time()
    for i, (images, targets) in enumerate(data_loader):
        images = list(image.to(device) for image in images)
        targets = [{k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in t.items()} for t in targets]
        with torch.autocast(device_type="cuda", enabled=scaler is not None):
            loss_dict = model(images, targets)
            losses = sum(loss for loss in loss_dict.values())
        loss_value = losses.item()
        if not math.isfinite(loss_value):
            print(f"Loss is {loss_value}, stopping training")
            sys.exit(1)
        optimizer.zero_grad()
        if scaler is not None:
            scaler.scale(losses).backward()
            scaler.step(optimizer)
            scaler.update()
        else:
            losses.backward()
            optimizer.step()
        if lr_scheduler is not None:
            lr_scheduler.step()
        if i % print_freq == 0:
            print(f"Epoch: [{epoch}] [{i}/{len(data_loader)}] loss {loss_value:.4f} "
                  + " ".join(f"{k} {v.item():.4f}" for k, v in loss_dict.items()) + f" time {time.time() - t0:.1f}")


def main(args):
    device = torch.device(args.device)
    dataset = FakeCoco(args.batch_size * args.iters, args.num_classes)
    data_loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True, num_workers=args.workers,
                             collate_fn=collate_fn)
    model = torchvision.models.get_model(args.model, weights=None, weights_backbone=None, num_classes=args.num_classes)
    model.to(device)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.SGD(params, lr=args.lr, momentum=args.momentum, weight_decay=args.weight_decay)
    scaler = torch.amp.GradScaler("cuda") if args.amp else None
    for epoch in range(args.epochs):
        train_one_epoch(model, optimizer, data_loader, device, epoch, 1, scaler)


if __name__ == "__main__":
    args = get_args_parser().parse_args()
    main(args)
