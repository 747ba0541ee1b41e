"""Mixed-precision training of a ConvNeXt-T on a 200-class subset (tiny-imagenet)."""
import argparse
import math
import time

import timm
import torch
import torch.nn as nn
from torch.utils.data import DataLoader
from torchvision import datasets, transforms


def get_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default="/data/tiny-imagenet-200")
    ap.add_argument("--epochs", type=int, default=50)
    ap.add_argument("--bs", type=int, default=256)
    ap.add_argument("--lr", type=float, default=4e-3)
    ap.add_argument("--warmup", type=int, default=5)
    return ap.parse_args()


def cosine_lr(step, total, warmup, base):
    if step < warmup:
        return base * (step + 1) / warmup
    p = (step - warmup) / max(1, total - warmup)
    return 0.5 * base * (1 + math.cos(math.pi * p))


def main():
    args = get_args()
    tf_train = transforms.Compose([transforms.RandomResizedCrop(64), transforms.RandomHorizontalFlip(),
                                   transforms.ToTensor()])
    tf_val = transforms.Compose([transforms.ToTensor()])
    train_dl = DataLoader(datasets.ImageFolder(f"{args.root}/train", tf_train), batch_size=args.bs,
                          shuffle=True, num_workers=12, pin_memory=True, drop_last=True)
    val_dl = DataLoader(datasets.ImageFolder(f"{args.root}/val", tf_val), batch_size=512, num_workers=12)

    model = timm.create_model("convnext_tiny", pretrained=False, num_classes=200).cuda()
    model = model.to(memory_format=torch.channels_last)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.05)
    scaler = torch.amp.GradScaler("cuda")
    total_steps = args.epochs * len(train_dl)
    warmup_steps = args.warmup * len(train_dl)
    step = 0

    for epoch in range(args.epochs):
        model.train()
        t0 = time.time()
        seen, loss_sum = 0, 0.0
        for images, targets in train_dl:
            images = images.cuda(non_blocking=True).to(memory_format=torch.channels_last)
            targets = targets.cuda(non_blocking=True)
            for g in optimizer.param_groups:
                g["lr"] = cosine_lr(step, total_steps, warmup_steps, args.lr)

            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = model(images)
                loss = criterion(logits, targets)

            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            scaler.step(optimizer)  # expect: OOM103
            scaler.update()

            loss_sum += loss.item() * images.size(0)
            seen += images.size(0)
            step += 1
            if step % 100 == 0:
                print(f"step {step}: loss {loss_sum / seen:.4f} lr {optimizer.param_groups[0]['lr']:.2e} "
                      f"mem {torch.cuda.max_memory_allocated() / 2**30:.1f}G")
                torch.cuda.empty_cache()  # expect: OOM106

        model.eval()
        correct = 0
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
            for images, targets in val_dl:
                preds = model(images.cuda().to(memory_format=torch.channels_last)).argmax(1)
                correct += (preds.cpu() == targets).sum().item()
        print(f"epoch {epoch}: val acc {correct / len(val_dl.dataset):.4f} ({time.time() - t0:.0f}s)")


if __name__ == "__main__":
    main()
