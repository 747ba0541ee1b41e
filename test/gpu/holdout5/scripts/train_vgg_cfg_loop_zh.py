# -*- coding: utf-8 -*-
"""VGG16-BN 风格的图像分类网络，用随机数据训练几步（测显存用）。

网络结构由下面的 cfg 列表决定，make_layers() 在循环里把卷积层拼起来。
"""
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

# 所有超参数都放在这个字典里
config = dict(
    batch_size=128,
    image_size=160,
    num_classes=200,
    lr=0.05,
    momentum=0.9,
    weight_decay=5e-4,
    epochs=2,
    max_iters=6,   # 只跑几步就停
    log_every=2,
)

# VGG16 的通道配置，"M" 表示 2x2 最大池化
cfg = [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"]


def make_layers(cfg, in_channels=3, batch_norm=True):
    layers = []
    for v in cfg:
        if v == "M":
            layers += [nn.MaxPool2d(kernel_size=2, stride=2)]
        else:
            conv2d = nn.Conv2d(in_channels, v, kernel_size=3, padding=1)
            if batch_norm:
                layers += [conv2d, nn.BatchNorm2d(v), nn.ReLU(inplace=True)]
            else:
                layers += [conv2d, nn.ReLU(inplace=True)]
            in_channels = v
    return nn.Sequential(*layers)


class VGG(nn.Module):
    def __init__(self, features, num_classes=1000, dropout=0.5):
        super().__init__()
        self.features = features
        self.avgpool = nn.AdaptiveAvgPool2d((5, 5))
        # 分类头：两层 2048 的全连接
        self.classifier = nn.Sequential(
            nn.Linear(512 * 5 * 5, 2048),
            nn.ReLU(True),
            nn.Dropout(p=dropout),
            nn.Linear(2048, 2048),
            nn.ReLU(True),
            nn.Dropout(p=dropout),
            nn.Linear(2048, num_classes),
        )

    def forward(self, x):
        x = self.features(x)
        x = self.avgpool(x)
        x = torch.flatten(x, 1)
        return self.classifier(x)


class RandomImageDataset(Dataset):
    """假数据：随机图片 + 随机标签"""

    def __init__(self, length, image_size, num_classes):
        self.length = length
        self.image_size = image_size
        self.num_classes = num_classes

    def __len__(self):
        return self.length

    def __getitem__(self, idx):
        img = torch.randn(3, self.image_size, self.image_size)
        label = int(torch.randint(0, self.num_classes, (1,)))
        return img, label


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    train_set = RandomImageDataset(config["batch_size"] * 4, config["image_size"], config["num_classes"])
    train_loader = DataLoader(train_set, batch_size=config["batch_size"], shuffle=True, num_workers=2, drop_last=True)

    model = VGG(make_layers(cfg), num_classes=config["num_classes"]).to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=config["lr"], momentum=config["momentum"],
                                weight_decay=config["weight_decay"])
    scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[30, 60], gamma=0.1)

    n_params = sum(p.numel() for p in model.parameters())
    print(f"参数量: {n_params / 1e6:.1f}M")

    it = 0
    for epoch in range(config["epochs"]):
        model.train()
        t0 = time.time()
        for images, labels in train_loader:
            images = images.to(device, non_blocking=True)
            labels = labels.to(device, non_blocking=True)

            outputs = model(images)
            loss = criterion(outputs, labels)

            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

            it += 1
            if it % config["log_every"] == 0:
                print(f"epoch {epoch} iter {it} loss {loss.item():.4f} ({time.time() - t0:.1f}s)")
            if it >= config["max_iters"]:
                break
        scheduler.step()
        if it >= config["max_iters"]:
            break

    # 显存峰值
    print("max allocated: %.2f GiB" % (torch.cuda.max_memory_allocated() / 2 ** 30))


if __name__ == "__main__":
    main()
