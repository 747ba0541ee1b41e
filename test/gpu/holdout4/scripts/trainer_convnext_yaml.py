"""Config-driven training, in the style of many research repos: a nested YAML config next to this file,
a Trainer class owning model, optimizer, scaler and loop."""
import os
import random
from pathlib import Path

import numpy as np
import timm
import torch
import torch.nn as nn
import yaml
from torch.utils.data import DataLoader, Dataset

CONFIG_PATH = Path(__file__).resolve().parent / "configs" / "convnext_trainer.yaml"


class SyntheticImages(Dataset):
    def __init__(self, n, img_size, num_classes):
        self.n, self.img_size, self.num_classes = n, img_size, num_classes

    def __len__(self):
        return self.n

    def __getitem__(self, idx):
        img = np.random.rand(3, self.img_size, self.img_size).astype(np.float32)
        img = (img - 0.5) / 0.25
        return torch.from_numpy(img), random.randrange(self.num_classes)


class Trainer:
    def __init__(self, cfg):
        self.cfg = cfg
        self.device = torch.device("cuda")
        mcfg, ocfg, tcfg = cfg["model"], cfg["optim"], cfg["trainer"]
        self.model = timm.create_model(
            mcfg["arch"], pretrained=False, num_classes=mcfg["num_classes"], drop_path_rate=mcfg["drop_path_rate"]
        ).to(self.device)
        self.optimizer = self.build_optimizer(ocfg)
        self.criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
        self.amp_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": None}[tcfg["precision"]]
        self.accum = tcfg["accumulate_grad_batches"]
        self.max_steps = tcfg["max_steps"]
        self.global_step = 0

    def build_optimizer(self, ocfg):
        params = [p for p in self.model.parameters() if p.requires_grad]
        if ocfg["name"] == "adamw":
            return torch.optim.AdamW(params, lr=ocfg["lr"], weight_decay=ocfg["weight_decay"],
                                     betas=tuple(ocfg["betas"]))
        if ocfg["name"] == "sgd":
            return torch.optim.SGD(params, lr=ocfg["lr"], momentum=0.9, weight_decay=ocfg["weight_decay"])
        raise ValueError(ocfg["name"])

    def train_dataloader(self):
        d = self.cfg["data"]
        ds = SyntheticImages(d["num_samples"], d["img_size"], self.cfg["model"]["num_classes"])
        return DataLoader(ds, batch_size=d["batch_size"], shuffle=True, num_workers=d["num_workers"],
                          pin_memory=True, drop_last=True)

    def training_step(self, batch):
        images, labels = (t.to(self.device, non_blocking=True) for t in batch)
        with torch.autocast("cuda", dtype=self.amp_dtype, enabled=self.amp_dtype is not None):
            logits = self.model(images)
            loss = self.criterion(logits, labels)
        (loss / self.accum).backward()
        return loss.detach()

    def fit(self):
        self.model.train()
        loader = self.train_dataloader()
        running = 0.0
        for micro_step, batch in enumerate(loader):
            running += self.training_step(batch).item()
            if (micro_step + 1) % self.accum == 0:
                nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg["trainer"]["clip_grad"])
                self.optimizer.step()
                self.optimizer.zero_grad(set_to_none=True)
                self.global_step += 1
                if self.global_step % self.cfg["trainer"]["log_every"] == 0:
                    print(f"[{self.cfg['experiment']['name']}] step {self.global_step} loss {running / self.accum:.4f}")
                running = 0.0
                if self.global_step >= self.max_steps:
                    break


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    os.environ["PYTHONHASHSEED"] = str(seed)


if __name__ == "__main__":
    with open(CONFIG_PATH) as f:
        cfg = yaml.safe_load(f)
    seed_everything(cfg["experiment"]["seed"])
    trainer = Trainer(cfg)
    trainer.fit()
    print("peak GiB", torch.cuda.max_memory_allocated() / 2**30)
