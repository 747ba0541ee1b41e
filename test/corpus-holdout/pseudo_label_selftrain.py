# -*- coding: utf-8 -*-
"""半监督自训练（伪标签）: 先在有标签数据上训练, 再用模型给无标签数据打软标签, 迭代若干轮.

Self-training with soft pseudo-labels on STL-10 (5k labelled / 100k unlabelled).
"""
import os

# 固定用 2 号卡, 别的卡被别人占了
os.environ["CUDA_VISIBLE_DEVICES"] = "2"  # expect: OOM105

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from torchvision import datasets, models, transforms

CFG = {
    "rounds": 4,           # 自训练轮数
    "epochs_per_round": 30,
    "bs": 128,
    "lr": 0.05,
    "threshold": 0.9,      # 置信度阈值
    "device": "cuda",
}


class IndexedUnlabelled(Dataset):
    def __init__(self, base):
        self.base = base

    def __len__(self):
        return len(self.base)

    def __getitem__(self, i):
        x, _ = self.base[i]
        return x, i


class PseudoLabeler:
    """保存每一轮的软标签 (soft targets), 训练下一轮时使用."""

    def __init__(self, model, device):
        self.model = model
        self.device = device
        self.soft_targets = []
        self.indices = []

    def refresh(self, loader):
        self.soft_targets.clear()
        self.indices.clear()
        self.model.eval()
        for x, idx in loader:
            logits = self.model(x.to(self.device))  # expect: OOM104
            probs = F.softmax(logits / 0.5, dim=1)  # 温度锐化
            self.soft_targets.append(probs)  # expect: OOM101
            self.indices.append(idx)
        return torch.cat(self.indices)

    def targets_for(self, batch_idx, lookup):
        rows = [lookup[int(i)] for i in batch_idx]
        flat = torch.cat(self.soft_targets)
        return flat[rows]


def train_round(model, labelled_dl, unlabelled_dl, labeler, lookup, opt, epochs, device, use_pseudo):
    for epoch in range(epochs):
        model.train()
        seen, correct = 0, 0
        u_iter = iter(unlabelled_dl)
        for x, y in labelled_dl:
            x, y = x.to(device), y.to(device)
            loss = F.cross_entropy(model(x), y)
            if use_pseudo:
                try:
                    xu, iu = next(u_iter)
                except StopIteration:
                    u_iter = iter(unlabelled_dl)
                    xu, iu = next(u_iter)
                target = labeler.targets_for(iu, lookup).detach()
                mask = (target.max(1).values > CFG["threshold"]).float()  # 只用高置信度样本
                lu = -(target * F.log_softmax(model(xu.to(device)), dim=1)).sum(1)
                loss = loss + (lu * mask).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            with torch.no_grad():
                correct += (model(x).argmax(1) == y).sum().item()
            seen += y.numel()
        print(f"  epoch {epoch} train-acc {correct / seen:.3f} loss {loss.item():.4f}")


def main():
    dev = CFG["device"]
    tf = transforms.Compose([transforms.RandomCrop(96, padding=8), transforms.RandomHorizontalFlip(),
                             transforms.ToTensor()])
    labelled = datasets.STL10("data", split="train", download=True, transform=tf)
    unlabelled = IndexedUnlabelled(datasets.STL10("data", split="unlabeled", download=True,
                                                  transform=transforms.ToTensor()))
    labelled_dl = DataLoader(labelled, CFG["bs"], shuffle=True, num_workers=8, drop_last=True)
    unlabelled_dl = DataLoader(unlabelled, CFG["bs"] * 2, shuffle=False, num_workers=8)

    model = models.resnet18(num_classes=10).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=CFG["lr"], momentum=0.9, weight_decay=5e-4)
    labeler = PseudoLabeler(model, dev)
    lookup = {}
    for r in range(CFG["rounds"]):
        print(f"第 {r} 轮")
        train_round(model, labelled_dl, unlabelled_dl, labeler, lookup, opt,
                    CFG["epochs_per_round"], dev, use_pseudo=r > 0)
        order = labeler.refresh(unlabelled_dl)
        lookup = {int(i): row for row, i in enumerate(order)}
        torch.save(model.state_dict(), f"selftrain_round{r}.pt")


if __name__ == "__main__":
    main()
