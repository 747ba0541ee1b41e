# -*- coding: utf-8 -*-
# 语义分割 U-Net 训练脚本（VOC 风格, 21 类），fp16 混合精度
# 数据用随机张量代替，只跑几个 iteration 做冒烟测试
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

try:
    from easydict import EasyDict as edict
except ImportError:  # 没装 easydict 的时候用这个简易版本
    class edict(dict):
        def __getattr__(self, name):
            try:
                return self[name]
            except KeyError as e:
                raise AttributeError(name) from e

        def __setattr__(self, name, value):
            self[name] = value

__C = edict()
cfg = __C

__C.MODEL = edict()
__C.MODEL.IN_CHANNELS = 3
__C.MODEL.NUM_CLASSES = 21
__C.MODEL.BASE_CHANNELS = 64

__C.TRAIN = edict()
__C.TRAIN.BATCH_SIZE = 16
__C.TRAIN.CROP_SIZE = 256   # 随机裁剪大小
__C.TRAIN.LR = 1e-4
__C.TRAIN.EPOCHS = 1
__C.TRAIN.ITERS_PER_EPOCH = 5
__C.TRAIN.IGNORE_LABEL = 255


def double_conv(in_ch, out_ch):
    """(conv => BN => ReLU) * 2"""
    return nn.Sequential(
        nn.Conv2d(in_ch, out_ch, kernel_size=3, padding=1, bias=False),
        nn.BatchNorm2d(out_ch),
        nn.ReLU(inplace=True),
        nn.Conv2d(out_ch, out_ch, kernel_size=3, padding=1, bias=False),
        nn.BatchNorm2d(out_ch),
        nn.ReLU(inplace=True),
    )


class Down(nn.Module):
    def __init__(self, in_ch, out_ch):
        super().__init__()
        self.pool_conv = nn.Sequential(nn.MaxPool2d(2), double_conv(in_ch, out_ch))

    def forward(self, x):
        return self.pool_conv(x)


class Up(nn.Module):
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
        return self.conv(torch.cat([x2, x1], dim=1))


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


class FakeVOC(Dataset):
    def __init__(self, length, crop, num_classes, ignore_label):
        self.length, self.crop, self.num_classes, self.ignore = length, crop, num_classes, ignore_label

    def __len__(self):
        return self.length

    def __getitem__(self, idx):
        img = torch.randn(3, self.crop, self.crop)
        mask = torch.randint(0, self.num_classes, (self.crop, self.crop))
        mask[:8, :] = self.ignore  # 边界像素忽略
        return img, mask


def main():
    device = "cuda"
    model = UNet(cfg.MODEL.IN_CHANNELS, cfg.MODEL.NUM_CLASSES, base=cfg.MODEL.BASE_CHANNELS).to(device)
    dataset = FakeVOC(cfg.TRAIN.BATCH_SIZE * cfg.TRAIN.ITERS_PER_EPOCH, cfg.TRAIN.CROP_SIZE,
                      cfg.MODEL.NUM_CLASSES, cfg.TRAIN.IGNORE_LABEL)
    loader = DataLoader(dataset, batch_size=cfg.TRAIN.BATCH_SIZE, shuffle=True, drop_last=True)

    criterion = nn.CrossEntropyLoss(ignore_index=cfg.TRAIN.IGNORE_LABEL)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.TRAIN.LR)
    scaler = torch.amp.GradScaler("cuda")  # 放在循环外面

    for epoch in range(cfg.TRAIN.EPOCHS):
        model.train()
        tic = time.time()
        for it, (img, mask) in enumerate(loader):
            img = img.to(device, non_blocking=True)
            mask = mask.to(device, non_blocking=True)
            optimizer.zero_grad(set_to_none=True)
            with torch.autocast("cuda", dtype=torch.float16):
                out = model(img)
                loss = criterion(out, mask)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            print("epoch %d iter %d loss %.4f" % (epoch, it, loss.item()))
        print("epoch time %.1fs" % (time.time() - tic))


if __name__ == "__main__":
    main()
