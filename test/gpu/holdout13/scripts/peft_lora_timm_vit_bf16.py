"""LoRA fine-tuning of a timm ViT-B/16 with peft (adapters on qkv + MLP, new head fully trained)."""
from dataclasses import dataclass, field
from typing import List

import timm
import torch
import torch.nn as nn
from peft import LoraConfig, get_peft_model
from torch.utils.data import DataLoader, Dataset


@dataclass
class Config:
    model_name: str = "vit_base_patch16_224"
    num_classes: int = 47
    img_size: int = 224
    batch_size: int = 128
    steps: int = 6
    lr: float = 5e-4
    lora_r: int = 16
    lora_alpha: int = 32
    target_modules: List[str] = field(default_factory=lambda: ["qkv", "fc1", "fc2"])
    modules_to_save: List[str] = field(default_factory=lambda: ["head"])


class Textures(Dataset):
    def __init__(self, cfg):
        self.cfg = cfg

    def __len__(self):
        return self.cfg.batch_size * self.cfg.steps

    def __getitem__(self, i):
        return torch.randn(3, self.cfg.img_size, self.cfg.img_size), i % self.cfg.num_classes


def main(cfg: Config = Config()):
    backbone = timm.create_model(cfg.model_name, pretrained=False, num_classes=cfg.num_classes)
    lora_cfg = LoraConfig(r=cfg.lora_r, lora_alpha=cfg.lora_alpha, lora_dropout=0.1,
                          target_modules=cfg.target_modules, modules_to_save=cfg.modules_to_save)
    model = get_peft_model(backbone, lora_cfg)
    model.print_trainable_parameters()
    model = model.cuda()

    loader = DataLoader(Textures(cfg), batch_size=cfg.batch_size, shuffle=True, num_workers=4, drop_last=True)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=0.05)
    criterion = nn.CrossEntropyLoss()

    model.train()
    for step, (x, y) in enumerate(loader):
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(x)
            loss = criterion(logits, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"[{step}] loss={loss.item():.4f}")

    model.eval()
    correct = 0
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        for x, y in loader:
            correct += (model(x.cuda()).argmax(-1).cpu() == y).sum().item()
    print("train acc", correct / len(loader.dataset))
    print("max mem GiB", torch.cuda.max_memory_allocated() / 2**30)


if __name__ == "__main__":
    main()
