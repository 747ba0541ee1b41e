"""Train a ViT-S/16 with the largest batch size that fits.

find_batch_size() probes a few steps and halves the batch after every OOM.
The cache is emptied once per epoch (the validation job shares the GPU).
"""
import argparse
import gc

import timm
import torch
import torch.nn as nn
from torch.utils.data import DataLoader
from torchvision import datasets, transforms


def probe(model, batch_size, image_size, device, steps=3):
    """A few synthetic training steps at this batch size (raises on OOM)."""
    opt = torch.optim.SGD(model.parameters(), lr=0.0)
    x = torch.randn(batch_size, 3, image_size, image_size, device=device)
    y = torch.randint(0, 1000, (batch_size,), device=device)
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    opt.zero_grad(set_to_none=True)


def find_batch_size(model, device, image_size=224, start=1024, floor=8):
    bs = start
    while bs >= floor:
        try:
            probe(model, bs, image_size, device)
            print(f"batch size {bs} fits")
            return bs
        except torch.cuda.OutOfMemoryError:
            print(f"OOM at batch size {bs}, halving")
            gc.collect()
            torch.cuda.empty_cache()
            bs //= 2
    raise RuntimeError("even the smallest batch does not fit")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="/data/imagenet100")
    ap.add_argument("--epochs", type=int, default=100)
    args = ap.parse_args()
    device = torch.device("cuda")

    model = timm.create_model("vit_small_patch16_224", num_classes=100).to(device)
    bs = find_batch_size(model, device)
    torch.cuda.empty_cache()

    tf = transforms.Compose([transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(),
                             transforms.ToTensor()])
    loader = DataLoader(datasets.ImageFolder(f"{args.data}/train", tf), batch_size=bs, shuffle=True,
                        num_workers=16, pin_memory=True, drop_last=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3 * bs / 1024, weight_decay=0.05)
    scaler = torch.amp.GradScaler("cuda")
    losses = []

    for epoch in range(args.epochs):
        model.train()
        for i, (x, y) in enumerate(loader):
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            with torch.autocast("cuda", dtype=torch.float16):
                loss = nn.functional.cross_entropy(model(x), y, label_smoothing=0.1)
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            if i % 100 == 0:
                losses.append(loss.item())
                print(f"epoch {epoch} it {i}: {losses[-1]:.4f}")
        torch.cuda.empty_cache()
        torch.save(model.state_dict(), "vit_s16.pt")


if __name__ == "__main__":
    main()
