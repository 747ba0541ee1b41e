# -*- coding: utf-8 -*-
# 叶片病害分类 —— 数据加载部分 + 训练
# 注意：在 Dataset 里直接 .cuda() 的版本，多进程会报 CUDA 初始化错误，所以那个 DataLoader 的 num_workers 设为 0
import os
import random

import numpy as np
import torch
import torch.nn as nn
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from torchvision import models, transforms

ROOT = "data/leaf"
IMG_SIZE = 256
BATCH = 32

train_tf = transforms.Compose([
    transforms.RandomResizedCrop(IMG_SIZE),
    transforms.RandomHorizontalFlip(),
    transforms.ToTensor(),
])
val_tf = transforms.Compose([transforms.Resize((IMG_SIZE, IMG_SIZE)), transforms.ToTensor()])


def list_images(split):
    items = []
    classes = sorted(os.listdir(os.path.join(ROOT, split)))
    for ci, c in enumerate(classes):
        for fn in os.listdir(os.path.join(ROOT, split, c)):
            items.append((os.path.join(ROOT, split, c, fn), ci))
    return items, classes


class LeafDataset(Dataset):
    """训练集：数据在 CPU 上处理，交给 DataLoader 多进程读取"""

    def __init__(self, items, tf):
        self.items = items
        self.tf = tf

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        path, label = self.items[i]
        x = self.tf(Image.open(path).convert("RGB"))
        # 以前这里写的是 x.cuda()，现在保证在 CPU
        x = x.to("cpu")
        if torch.cuda.is_available() and torch.cuda.device_count() > 1:
            x = x.contiguous()
        return x, label


class LeafCachedDataset(Dataset):
    """验证集：很小，直接放到显存里（单进程读取）"""

    def __init__(self, items, tf):
        self.items = items
        self.tf = tf

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        path, label = self.items[i]
        x = self.tf(Image.open(path).convert("RGB")).cuda()
        return x, torch.tensor(label).cuda()


class LeafTestDataset(LeafCachedDataset):
    pass


def collate(batch):
    xs, ys = zip(*batch)
    return torch.stack(xs), torch.tensor(ys)


def seed_worker(worker_id):
    # 每个 worker 的随机种子
    worker_seed = torch.initial_seed() % 2 ** 32
    np.random.seed(worker_seed)
    random.seed(worker_seed)
    torch.cuda.manual_seed(worker_seed)


train_items, classes = list_images("train")
val_items, _ = list_images("val")
test_items, _ = list_images("test")

train_loader = DataLoader(LeafDataset(train_items, train_tf), batch_size=BATCH, shuffle=True,
                          num_workers=4, pin_memory=True, collate_fn=collate, worker_init_fn=seed_worker)
val_loader = DataLoader(LeafCachedDataset(val_items, val_tf), batch_size=BATCH, num_workers=0)
test_loader = DataLoader(LeafTestDataset(test_items, val_tf), batch_size=BATCH)

model = models.efficientnet_b0(weights="IMAGENET1K_V1")
model.classifier[1] = nn.Linear(model.classifier[1].in_features, len(classes))
model = model.cuda()
criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)

for epoch in range(15):
    model.train()
    for x, y in train_loader:
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)  # 在训练循环里搬到 GPU
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    model.eval()
    correct = total = 0
    with torch.no_grad():
        for x, y in val_loader:
            pred = model(x).argmax(1)
            correct += (pred == y).sum().item()
            total += y.numel()
    print(f"第 {epoch} 轮  验证准确率 {correct / total:.4f}")

torch.save(model.state_dict(), "leaf_effnet_b0.pth")
