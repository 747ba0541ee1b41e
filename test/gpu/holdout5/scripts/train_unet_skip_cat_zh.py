# -*- coding: utf-8 -*-
"""经典 U-Net 做二值分割（细胞 / 道路之类），随机数据，测一下训练时的显存。"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

BATCH_SIZE = 16
IMG_SIZE = 256
IN_CHANNELS = 3
N_CLASSES = 1          # 二分类，输出一个通道
BASE = 64              # 第一层的通道数，之后每层翻倍
LR = 1e-4
NUM_EPOCHS = 1
STEPS = 5


def double_conv(in_ch, out_ch):
    # (卷积 => BN => ReLU) * 2
    return nn.Sequential(
        nn.Conv2d(in_ch, out_ch, 3, padding=1, bias=False),
        nn.BatchNorm2d(out_ch),
        nn.ReLU(inplace=True),
        nn.Conv2d(out_ch, out_ch, 3, padding=1, bias=False),
        nn.BatchNorm2d(out_ch),
        nn.ReLU(inplace=True),
    )


class Down(nn.Module):
    """下采样：最大池化再接 double_conv"""

    def __init__(self, in_ch, out_ch):
        super().__init__()
        self.pool_conv = nn.Sequential(nn.MaxPool2d(2), double_conv(in_ch, out_ch))

    def forward(self, x):
        return self.pool_conv(x)


class Up(nn.Module):
    """上采样：转置卷积，然后和编码器的特征拼接（torch.cat）"""

    def __init__(self, in_ch, out_ch):
        super().__init__()
        self.up = nn.ConvTranspose2d(in_ch, in_ch // 2, kernel_size=2, stride=2)
        self.conv = double_conv(in_ch, out_ch)

    def forward(self, x1, x2):
        x1 = self.up(x1)
        # 尺寸不一致时补齐
        dy = x2.size(2) - x1.size(2)
        dx = x2.size(3) - x1.size(3)
        x1 = F.pad(x1, [dx // 2, dx - dx // 2, dy // 2, dy - dy // 2])
        x = torch.cat([x2, x1], dim=1)
        return self.conv(x)


class UNet(nn.Module):
    def __init__(self, n_channels, n_classes, base=64):
        super().__init__()
        self.inc = double_conv(n_channels, base)
        self.down1 = Down(base, base * 2)
        self.down2 = Down(base * 2, base * 4)
        self.down3 = Down(base * 4, base * 8)
        self.down4 = Down(base * 8, base * 16)
        self.up1 = Up(base * 16, base * 8)
        self.up2 = Up(base * 8, base * 4)
        self.up3 = Up(base * 4, base * 2)
        self.up4 = Up(base * 2, base)
        self.outc = nn.Conv2d(base, n_classes, kernel_size=1)

    def forward(self, x):
        x1 = self.inc(x)
        x2 = self.down1(x1)
        x3 = self.down2(x2)
        x4 = self.down3(x3)
        x5 = self.down4(x4)
        x = self.up1(x5, x4)
        x = self.up2(x, x3)
        x = self.up3(x, x2)
        x = self.up4(x, x1)
        return self.outc(x)


class SegDataset(Dataset):
    """随机图片和随机掩码"""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        img = torch.rand(IN_CHANNELS, IMG_SIZE, IMG_SIZE)
        mask = (torch.rand(1, IMG_SIZE, IMG_SIZE) > 0.5).float()
        return img, mask


def dice_loss(logits, target, eps=1.0):
    prob = torch.sigmoid(logits)
    inter = (prob * target).sum(dim=(2, 3))
    union = prob.sum(dim=(2, 3)) + target.sum(dim=(2, 3))
    return 1 - ((2 * inter + eps) / (union + eps)).mean()


if __name__ == "__main__":
    device = torch.device("cuda")
    net = UNet(IN_CHANNELS, N_CLASSES, base=BASE).to(device)
    optimizer = torch.optim.Adam(net.parameters(), lr=LR)
    bce = nn.BCEWithLogitsLoss()
    loader = DataLoader(SegDataset(BATCH_SIZE * STEPS), batch_size=BATCH_SIZE, shuffle=True, num_workers=2)

    for epoch in range(NUM_EPOCHS):
        net.train()
        for i, (imgs, masks) in enumerate(loader):
            imgs, masks = imgs.to(device), masks.to(device)
            pred = net(imgs)
            loss = bce(pred, masks) + dice_loss(pred, masks)   # BCE + Dice
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            print(f"epoch {epoch} batch {i} loss {loss.item():.4f}")
    print("峰值显存 %.2f GB" % (torch.cuda.max_memory_allocated() / 1024 ** 3))
