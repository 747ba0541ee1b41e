"""SSDlite320-MobileNetV3 detector training, torchvision-references style (loss dict, warmup, SGD)."""
import argparse
import math

import torch
import torchvision
from torch.utils.data import DataLoader, Dataset
from torchvision.models.detection import ssdlite320_mobilenet_v3_large


def get_args_parser(add_help=True):
    parser = argparse.ArgumentParser(description="PyTorch Detection Training", add_help=add_help)
    parser.add_argument("--device", default="cuda", type=str)
    parser.add_argument("-b", "--batch-size", default=128, type=int, help="images per gpu")
    parser.add_argument("--epochs", default=1, type=int)
    parser.add_argument("-j", "--workers", default=4, type=int)
    parser.add_argument("--lr", default=0.15, type=float)
    parser.add_argument("--momentum", default=0.9, type=float)
    parser.add_argument("--wd", "--weight-decay", default=4e-5, type=float, dest="weight_decay")
    parser.add_argument("--num-classes", default=21, type=int)
    parser.add_argument("--data-size", default=320, type=int)
    parser.add_argument("--max-iters", default=8, type=int)
    parser.add_argument("--print-freq", default=2, type=int)
    return parser


class SyntheticVOC(Dataset):
    def __init__(self, n, size, num_classes, max_objects=12):
        self.n, self.size, self.num_classes, self.max_objects = n, size, num_classes, max_objects

    def __len__(self):
        return self.n

    def __getitem__(self, idx):
        img = torch.rand(3, self.size, self.size)
        k = torch.randint(1, self.max_objects + 1, ()).item()
        xy = torch.rand(k, 2) * (self.size * 0.7)
        wh = torch.rand(k, 2) * (self.size * 0.3) + 8
        boxes = torch.cat([xy, (xy + wh).clamp(max=self.size - 1)], dim=1)
        labels = torch.randint(1, self.num_classes, (k,))
        return img, {"boxes": boxes, "labels": labels}


def collate_fn(batch):
    return tuple(zip(*batch))


def train_one_epoch(model, optimizer, loader, device, epoch, args, warmup):
    model.train()
    for it, (images, targets) in enumerate(loader):
        images = [img.to(device) for img in images]
        targets = [{k: v.to(device) for k, v in t.items()} for t in targets]
        loss_dict = model(images, targets)
        losses = sum(loss for loss in loss_dict.values())
        if not math.isfinite(losses.item()):
            raise SystemExit(f"loss is {losses.item()}, stopping")
        optimizer.zero_grad()
        losses.backward()
        optimizer.step()
        warmup.step()
        if it % args.print_freq == 0:
            print(f"epoch {epoch} it {it} loss {losses.item():.3f} " +
                  " ".join(f"{k}={v.item():.3f}" for k, v in loss_dict.items()))
        if it + 1 >= args.max_iters:
            break


@torch.no_grad()
def evaluate(model, loader, device, n_batches=1):
    model.eval()
    n_det = 0
    for i, (images, _) in enumerate(loader):
        outputs = model([img.to(device) for img in images])
        n_det += sum(len(o["boxes"]) for o in outputs)
        if i + 1 >= n_batches:
            break
    return n_det


def main(args):
    device = torch.device(args.device)
    model = ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None, num_classes=args.num_classes)
    model.to(device)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.SGD(params, lr=args.lr, momentum=args.momentum, weight_decay=args.weight_decay)
    warmup = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=0.001, total_iters=4)

    dataset = SyntheticVOC(args.batch_size * args.max_iters, args.data_size, args.num_classes)
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True, num_workers=args.workers,
                        collate_fn=collate_fn, drop_last=True)
    for epoch in range(args.epochs):
        train_one_epoch(model, optimizer, loader, device, epoch, args, warmup)
    print("detections on one val batch:", evaluate(model, loader, device))
    print(f"torchvision {torchvision.__version__}, max mem {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    args = get_args_parser().parse_args()
    main(args)
