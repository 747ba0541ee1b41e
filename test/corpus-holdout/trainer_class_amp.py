"""A small reusable trainer for image classifiers (AMP, early stopping, checkpoints)."""
import copy
import os
from collections import defaultdict

import torch
import torch.nn as nn
from torch.utils.data import DataLoader
from torchvision import datasets, models, transforms


class EarlyStopping:
    def __init__(self, patience=5, min_delta=1e-4):
        self.patience = patience
        self.min_delta = min_delta
        self.best = float("inf")
        self.bad_epochs = 0

    def step(self, metric: float) -> bool:
        if metric < self.best - self.min_delta:
            self.best = metric
            self.bad_epochs = 0
        else:
            self.bad_epochs += 1
        return self.bad_epochs >= self.patience


class ClassifierTrainer:
    def __init__(self, model, cfg):
        self.cfg = cfg
        self.device = torch.device(cfg.get("device", "cuda"))
        self.model = model.to(self.device)
        if torch.cuda.device_count() > 1:
            self.model = nn.DataParallel(self.model)  # expect: OOM108
        self.criterion = nn.CrossEntropyLoss()
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=cfg["lr"], weight_decay=cfg["wd"])
        self.scaler = torch.amp.GradScaler("cuda")
        self.history = defaultdict(list)
        self.best_state = None

    def train_epoch(self, loader):
        self.model.train()
        n_correct, n_seen = 0, 0
        for step, (x, y) in enumerate(loader):
            x = x.to(self.device, non_blocking=True)
            y = y.to(self.device, non_blocking=True)
            with torch.autocast("cuda", dtype=torch.float16):
                out = self.model(x)
                loss = self.criterion(out, y)
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)  # expect: OOM103
            self.scaler.update()

            self.history["train_loss"].append(loss)  # expect: OOM101
            n_correct += (out.argmax(1) == y).sum().item()
            n_seen += y.numel()
        self.history["train_acc"].append(n_correct / n_seen)

    @torch.no_grad()
    def evaluate(self, loader):
        self.model.eval()
        total_loss, n_correct, n_seen = 0.0, 0, 0
        for x, y in loader:
            x = x.to(self.device, non_blocking=True)
            y = y.to(self.device, non_blocking=True)
            with torch.autocast("cuda", dtype=torch.float16):
                out = self.model(x)
                loss = self.criterion(out, y)
            total_loss += loss * y.numel()
            n_correct += (out.argmax(1) == y).sum()
            n_seen += y.numel()
        val_loss = (total_loss / n_seen).item()
        self.history["val_loss"].append(val_loss)
        self.history["val_acc"].append((n_correct / n_seen).item())
        return val_loss

    def fit(self, train_loader, val_loader, epochs):
        stopper = EarlyStopping(patience=self.cfg.get("patience", 5))
        for epoch in range(epochs):
            self.train_epoch(train_loader)
            val_loss = self.evaluate(val_loader)
            epoch_train_loss = torch.stack(self.history["train_loss"][-len(train_loader):]).mean().item()
            print(f"epoch {epoch:3d} | train {epoch_train_loss:.4f} | val {val_loss:.4f} "
                  f"| acc {self.history['val_acc'][-1]:.3f}")
            if val_loss <= stopper.best:
                self.best_state = copy.deepcopy(self.model.state_dict())
                torch.save(self.best_state, os.path.join(self.cfg["out"], "best.pt"))
            if stopper.step(val_loss):
                print(f"early stop at epoch {epoch}")
                break
        if self.best_state is not None:
            self.model.load_state_dict(self.best_state)
        return self.history


if __name__ == "__main__":
    cfg = {"lr": 3e-4, "wd": 0.05, "out": "checkpoints", "patience": 7}
    os.makedirs(cfg["out"], exist_ok=True)
    tf = transforms.Compose([transforms.Resize(224), transforms.ToTensor(),
                             transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
    train_ds = datasets.ImageFolder("data/flowers/train", transform=tf)
    val_ds = datasets.ImageFolder("data/flowers/val", transform=tf)
    train_dl = DataLoader(train_ds, batch_size=64, shuffle=True, num_workers=8, pin_memory=True)
    val_dl = DataLoader(val_ds, batch_size=128, num_workers=8, pin_memory=True)

    net = models.efficientnet_b0(weights="IMAGENET1K_V1")
    net.classifier[1] = nn.Linear(net.classifier[1].in_features, len(train_ds.classes))
    ClassifierTrainer(net, cfg).fit(train_dl, val_dl, epochs=30)
