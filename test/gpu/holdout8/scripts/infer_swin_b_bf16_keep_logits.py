"""Score a validation set with torchvision's Swin-B under bf16 autocast and report top-1 / top-5.

Logits of every batch stay on the GPU and are concatenated at the end (the whole split is 2048 images x 1000
classes, small next to the model).
"""
import argparse
import time

import torch
from torch.utils.data import DataLoader, Dataset
from torchvision import models


class ValStub(Dataset):
    def __init__(self, n, size):
        self.n, self.size = n, size

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.randn(3, self.size, self.size), i % 1000


@torch.inference_mode()
def evaluate(model, loader, device):
    all_logits, all_targets = [], []
    for images, targets in loader:
        images = images.to(device, non_blocking=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(images)
        all_logits.append(logits.float())
        all_targets.append(targets.to(device))
    logits = torch.cat(all_logits)
    targets = torch.cat(all_targets)
    top5 = logits.topk(5, dim=1).indices
    acc1 = (top5[:, 0] == targets).float().mean().item()
    acc5 = (top5 == targets[:, None]).any(dim=1).float().mean().item()
    return acc1, acc5


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--arch", default="swin_b")
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--val-size", type=int, default=2048)
    parser.add_argument("--crop", type=int, default=224)
    args = parser.parse_args()

    device = torch.device("cuda")
    model = models.get_model(args.arch, weights=None)
    model.eval().to(device)

    loader = DataLoader(ValStub(args.val_size, args.crop), batch_size=args.batch_size, num_workers=6,
                        pin_memory=True)
    t0 = time.time()
    acc1, acc5 = evaluate(model, loader, device)
    n = args.val_size
    print(f"{args.arch}: acc@1 {acc1:.4f} acc@5 {acc5:.4f}  {n / (time.time() - t0):.0f} img/s")
    print(f"max allocated {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
