# -*- coding: utf-8 -*-
"""原始波形的声音分类（类似 ESC-50 / 关键词识别），一维深度可分离卷积网络，随机数据。

批大小可以用环境变量 BATCH_SIZE 改。
"""
import os

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

SAMPLE_RATE = 16000
CLIP_SECONDS = 4
NUM_SAMPLES = SAMPLE_RATE * CLIP_SECONDS   # 每条音频 64000 个采样点
NUM_CLASSES = 50
BATCH_SIZE = int(os.environ.get("BATCH_SIZE", "64"))
EPOCHS = int(os.environ.get("EPOCHS", "1"))
STEPS_PER_EPOCH = 5


class DWSeparableConv1d(nn.Module):
    """深度卷积 + 逐点卷积"""

    def __init__(self, c_in, c_out, kernel_size, stride=1):
        super().__init__()
        self.depthwise = nn.Conv1d(c_in, c_in, kernel_size, stride=stride, padding=kernel_size // 2,
                                   groups=c_in, bias=False)
        self.pointwise = nn.Conv1d(c_in, c_out, 1, bias=False)
        self.bn = nn.BatchNorm1d(c_out)
        self.act = nn.GELU()

    def forward(self, x):
        return self.act(self.bn(self.pointwise(self.depthwise(x))))


class ResBlock1d(nn.Module):
    def __init__(self, channels, kernel_size):
        super().__init__()
        self.conv1 = DWSeparableConv1d(channels, channels, kernel_size)
        self.conv2 = DWSeparableConv1d(channels, channels, kernel_size)

    def forward(self, x):
        return x + self.conv2(self.conv1(x))


class AudioNet(nn.Module):
    def __init__(self, num_classes, channels=(128, 256, 384, 512), blocks_per_stage=2):
        super().__init__()
        # 第一层：大卷积核，步长 4，把 64000 降到 16000
        self.stem = nn.Sequential(nn.Conv1d(1, channels[0], 80, stride=4, padding=38, bias=False),
                                  nn.BatchNorm1d(channels[0]), nn.GELU())
        layers = []
        c_prev = channels[0]
        for c in channels:
            layers.append(DWSeparableConv1d(c_prev, c, kernel_size=9, stride=1 if c == c_prev else 4))
            for _ in range(blocks_per_stage):
                layers.append(ResBlock1d(c, kernel_size=9))
            c_prev = c
        self.body = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool1d(1)
        self.fc = nn.Linear(c_prev, num_classes)

    def forward(self, wav):
        x = self.stem(wav)
        x = self.body(x)
        x = self.pool(x).squeeze(-1)
        return self.fc(x)


class NoiseClips(Dataset):
    def __len__(self):
        return BATCH_SIZE * STEPS_PER_EPOCH

    def __getitem__(self, idx):
        wav = torch.randn(1, NUM_SAMPLES) * 0.1
        return wav, idx % NUM_CLASSES


def main():
    device = "cuda"
    model = AudioNet(NUM_CLASSES).to(device)
    # RMSprop，跟论文里一样
    optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-3, alpha=0.9, eps=1e-6, momentum=0.0)
    criterion = nn.CrossEntropyLoss()
    loader = DataLoader(NoiseClips(), batch_size=BATCH_SIZE, shuffle=True, num_workers=2)

    for epoch in range(EPOCHS):
        model.train()
        for i, (wav, y) in enumerate(loader):
            wav, y = wav.to(device), y.to(device)
            loss = criterion(model(wav), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            print(f"[{epoch}] {i} loss={loss.item():.3f}")
    print("显存峰值: {:.2f} GiB".format(torch.cuda.max_memory_allocated() / 2 ** 30))


if __name__ == "__main__":
    main()
