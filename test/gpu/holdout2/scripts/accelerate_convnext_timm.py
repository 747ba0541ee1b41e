import math
import time

import timm
import torch
from accelerate import Accelerator
from timm.loss import LabelSmoothingCrossEntropy
from torch.utils.data import DataLoader, Dataset

ARCHS = {
    "tiny": "convnext_tiny",
    "small": "convnext_small",
    "base": "convnext_base",
}


class RandomImages(Dataset):
    def __init__(self, n, img_size, num_classes):
        self.n = n
        self.img_size = img_size
        self.num_classes = num_classes

    def __len__(self):
        return self.n

    def __getitem__(self, idx):
        x = torch.randn(3, self.img_size, self.img_size)
        y = torch.randint(0, self.num_classes, ()).item()
        return x, y


def cosine_with_warmup(optimizer, warmup, total):
    def f(step):
        if step < warmup:
            return (step + 1) / warmup
        return 0.5 * (1.0 + math.cos(math.pi * (step - warmup) / max(1, total - warmup)))
    return torch.optim.lr_scheduler.LambdaLR(optimizer, f)


def main(variant="small", batch_size=48, img_size=224, num_classes=1000, accum_steps=2,
         lr=4e-3, weight_decay=0.05, num_steps=3):
    accelerator = Accelerator(mixed_precision="bf16", gradient_accumulation_steps=accum_steps)
    arch = ARCHS[variant]
    model = timm.create_model(arch, pretrained=False, num_classes=num_classes, drop_path_rate=0.1)
    accelerator.print(f"{arch}: {sum(p.numel() for p in model.parameters()) / 1e6:.1f}M params")

    train_ds = RandomImages(batch_size * accum_steps * num_steps, img_size, num_classes)
    val_ds = RandomImages(batch_size * 2, img_size, num_classes)
    train_dl = DataLoader(train_ds, batch_size=batch_size, shuffle=True, num_workers=4, drop_last=True)
    val_dl = DataLoader(val_ds, batch_size=batch_size * 2, num_workers=2)

    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay, foreach=True)
    scheduler = cosine_with_warmup(optimizer, warmup=1, total=num_steps)
    criterion = LabelSmoothingCrossEntropy(smoothing=0.1)

    model, optimizer, train_dl, val_dl, scheduler = accelerator.prepare(
        model, optimizer, train_dl, val_dl, scheduler)

    completed = 0
    model.train()
    t0 = time.time()
    for images, targets in train_dl:
        with accelerator.accumulate(model):
            logits = model(images)
            loss = criterion(logits, targets)
            accelerator.backward(loss)
            if accelerator.sync_gradients:
                accelerator.clip_grad_norm_(model.parameters(), 5.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
        if accelerator.sync_gradients:
            completed += 1
            accelerator.print(f"update {completed}: loss {loss.item():.4f} ({time.time() - t0:.1f}s)")
            if completed >= num_steps:
                break

    model.eval()
    correct = seen = 0
    with torch.no_grad():
        for images, targets in val_dl:
            preds = model(images).argmax(dim=-1)
            correct += (preds == targets).sum().item()
            seen += targets.numel()
    accelerator.print(f"val top-1: {correct / seen:.4f}")


if __name__ == "__main__":
    main()
