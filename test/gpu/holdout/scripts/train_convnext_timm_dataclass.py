from dataclasses import dataclass

import timm
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


@dataclass
class Cfg:
    model_name: str = "convnext_tiny"
    num_classes: int = 200          # CUB-200
    img_size: int = 224
    batch_size: int = 64
    lr: float = 4e-3
    weight_decay: float = 0.05
    drop_path: float = 0.1
    epochs: int = 1
    steps_per_epoch: int = 5
    clip_grad: float = 5.0


class Birds(Dataset):
    def __init__(self, cfg: Cfg):
        self.cfg = cfg

    def __len__(self):
        return self.cfg.batch_size * self.cfg.steps_per_epoch

    def __getitem__(self, idx):
        return torch.randn(3, self.cfg.img_size, self.cfg.img_size), idx % self.cfg.num_classes


def train(cfg: Cfg):
    device = torch.device("cuda")
    model = timm.create_model(cfg.model_name, pretrained=False, num_classes=cfg.num_classes,
                              drop_path_rate=cfg.drop_path)
    model = model.to(device)

    loader = DataLoader(Birds(cfg), batch_size=cfg.batch_size, shuffle=True, num_workers=2, pin_memory=True,
                        drop_last=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay, fused=True)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=cfg.epochs * len(loader))
    criterion = nn.CrossEntropyLoss()

    for epoch in range(cfg.epochs):
        model.train()
        for it, (x, y) in enumerate(loader):
            x = x.to(device, non_blocking=True)
            y = y.to(device, non_blocking=True)
            with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
                loss = criterion(model(x), y)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            grad_norm = nn.utils.clip_grad_norm_(model.parameters(), cfg.clip_grad)
            optimizer.step()
            sched.step()
            print(f"epoch {epoch} it {it} loss {loss.item():.4f} gnorm {grad_norm.item():.2f}")


if __name__ == "__main__":
    train(Cfg())
