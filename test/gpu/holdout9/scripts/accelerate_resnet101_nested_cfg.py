"""Places-365 style scene classifier: torchvision ResNet-101 under Accelerate.

`accelerator.accumulate` handles gradient accumulation; bf16 mixed precision; channels_last.
"""
import time

import torch
import torch.nn as nn
import torchvision
from accelerate import Accelerator
from torch.utils.data import DataLoader, Dataset

cfg = {
    "model": {"arch": "resnet101", "num_classes": 365},
    "data": {"image_size": 224, "batch_size": 64, "num_workers": 4, "train_size": 1024},
    "optim": {"lr": 0.1, "momentum": 0.9, "weight_decay": 1e-4, "nesterov": True},
    "train": {"grad_accum": 4, "epochs": 1, "mixed_precision": "bf16", "log_every": 4, "clip": 5.0},
}


class FakeScenes(Dataset):
    def __init__(self, n, size, num_classes):
        self.n, self.size, self.num_classes = n, size, num_classes

    def __len__(self):
        return self.n

    def __getitem__(self, idx):
        return torch.rand(3, self.size, self.size), idx % self.num_classes


def main():
    accelerator = Accelerator(mixed_precision=cfg["train"]["mixed_precision"],
                              gradient_accumulation_steps=cfg["train"]["grad_accum"])

    model = torchvision.models.get_model(cfg["model"]["arch"], weights=None,
                                         num_classes=cfg["model"]["num_classes"])
    model = model.to(memory_format=torch.channels_last)

    dcfg = cfg["data"]
    loader = DataLoader(FakeScenes(dcfg["train_size"], dcfg["image_size"], cfg["model"]["num_classes"]),
                        batch_size=dcfg["batch_size"], shuffle=True, num_workers=dcfg["num_workers"],
                        pin_memory=True, drop_last=True)

    ocfg = cfg["optim"]
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        (no_decay if p.ndim <= 1 else decay).append(p)
    optimizer = torch.optim.SGD([{"params": decay, "weight_decay": ocfg["weight_decay"]},
                                 {"params": no_decay, "weight_decay": 0.0}],
                                lr=ocfg["lr"], momentum=ocfg["momentum"], nesterov=ocfg["nesterov"])
    updates = cfg["train"]["epochs"] * len(loader) // cfg["train"]["grad_accum"]
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=ocfg["lr"], total_steps=updates)

    model, optimizer, loader, scheduler = accelerator.prepare(model, optimizer, loader, scheduler)
    criterion = nn.CrossEntropyLoss()

    t0 = time.time()
    update = 0
    for epoch in range(cfg["train"]["epochs"]):
        model.train()
        for step, (images, targets) in enumerate(loader):
            images = images.to(memory_format=torch.channels_last)
            with accelerator.accumulate(model):
                logits = model(images)
                loss = criterion(logits, targets)
                accelerator.backward(loss)
                if accelerator.sync_gradients:
                    accelerator.clip_grad_norm_(model.parameters(), cfg["train"]["clip"])
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad()
            if accelerator.sync_gradients:
                update += 1
                if update % 1 == 0:
                    accelerator.print(f"epoch {epoch} update {update} loss {loss.item():.3f}")
    accelerator.print(f"{time.time() - t0:.1f}s, peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
