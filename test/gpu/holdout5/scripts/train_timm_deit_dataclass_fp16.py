"""Fine-tune a timm vision transformer with fp16 mixed precision.

Hyper-parameters live in a dataclass; override nothing, it's a benchmark run on random images.
"""
from dataclasses import dataclass, field

import numpy as np
import timm
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


@dataclass
class TrainConfig:
    model_name: str = "deit_small_patch16_224"
    num_classes: int = 100
    img_size: int = 224
    batch_size: int = 256
    epochs: int = 1
    lr: float = 5e-4
    min_lr: float = 1e-6
    weight_decay: float = 0.05
    drop_path: float = 0.1
    warmup_steps: int = 2
    max_steps: int = 6
    betas: tuple = field(default=(0.9, 0.999))


class NumpyImages(Dataset):
    def __init__(self, n, img_size, num_classes, seed=0):
        rng = np.random.default_rng(seed)
        self.x = rng.standard_normal((n, 3, img_size, img_size), dtype=np.float32)
        self.y = rng.integers(0, num_classes, size=n)

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return torch.from_numpy(self.x[i]), int(self.y[i])


def main(cfg: TrainConfig = TrainConfig()):
    device = torch.device("cuda")
    model = timm.create_model(cfg.model_name, pretrained=False, num_classes=cfg.num_classes,
                              drop_path_rate=cfg.drop_path)
    model.to(device)

    ds = NumpyImages(cfg.batch_size * cfg.max_steps, cfg.img_size, cfg.num_classes)
    dl = DataLoader(ds, batch_size=cfg.batch_size, shuffle=True, num_workers=4, drop_last=True)

    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr, betas=cfg.betas, weight_decay=cfg.weight_decay)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=cfg.lr, total_steps=cfg.max_steps,
                                                    pct_start=cfg.warmup_steps / cfg.max_steps)
    scaler = torch.amp.GradScaler("cuda")

    step = 0
    for epoch in range(cfg.epochs):
        model.train()
        for images, target in dl:
            images, target = images.to(device), target.to(device)
            with torch.autocast("cuda", dtype=torch.float16):
                output = model(images)
                loss = F.cross_entropy(output, target, label_smoothing=0.1)

            optimizer.zero_grad()
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()
            step += 1
            print(f"step {step} loss {loss.item():.4f} scale {scaler.get_scale():.0f}")
            if step >= cfg.max_steps:
                break


if __name__ == "__main__":
    main()
