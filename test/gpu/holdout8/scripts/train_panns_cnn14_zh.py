# -*- coding: utf-8 -*-
"""音频标签分类（AudioSet 527 类）—— PANNs 的 Cnn14 结构，从头训练。

输入是预先提取好的 log-mel 特征（10 秒、32 kHz、hop 320、64 个 mel 频带），这里用随机数代替。
"""
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

# ---------------- 超参数 ----------------
SAMPLE_RATE = 32000
CLIP_SECONDS = 10
HOP_LENGTH = 320
N_MELS = 64
N_FRAMES = SAMPLE_RATE * CLIP_SECONDS // HOP_LENGTH + 1   # 1001 帧
CLASSES_NUM = 527
BATCH_SIZE = 32
LEARNING_RATE = 1e-3
MAX_ITERATIONS = 6


class MelFeatureDataset(Dataset):
    """假装从 hdf5 里读出来的 log-mel 特征和多标签 target。"""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, idx):
        feat = np.random.randn(N_FRAMES, N_MELS).astype(np.float32)
        target = (np.random.rand(CLASSES_NUM) < 0.01).astype(np.float32)
        return torch.from_numpy(feat), torch.from_numpy(target)


class ConvBlock(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, out_channels, kernel_size=3, stride=1, padding=1, bias=False)
        self.conv2 = nn.Conv2d(out_channels, out_channels, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(out_channels)
        self.bn2 = nn.BatchNorm2d(out_channels)

    def forward(self, x, pool_size=(2, 2), pool_type="avg"):
        x = F.relu_(self.bn1(self.conv1(x)))
        x = F.relu_(self.bn2(self.conv2(x)))
        if pool_type == "max":
            x = F.max_pool2d(x, kernel_size=pool_size)
        elif pool_type == "avg":
            x = F.avg_pool2d(x, kernel_size=pool_size)
        elif pool_type == "avg+max":
            x = F.avg_pool2d(x, kernel_size=pool_size) + F.max_pool2d(x, kernel_size=pool_size)
        return x


class Cnn14(nn.Module):
    def __init__(self, mel_bins, classes_num):
        super().__init__()
        self.bn0 = nn.BatchNorm2d(mel_bins)   # 对每个 mel 频带做归一化
        self.conv_block1 = ConvBlock(1, 64)
        self.conv_block2 = ConvBlock(64, 128)
        self.conv_block3 = ConvBlock(128, 256)
        self.conv_block4 = ConvBlock(256, 512)
        self.conv_block5 = ConvBlock(512, 1024)
        self.conv_block6 = ConvBlock(1024, 2048)
        self.fc1 = nn.Linear(2048, 2048, bias=True)
        self.fc_audioset = nn.Linear(2048, classes_num, bias=True)

    def forward(self, x):
        # x: (batch, time_steps, mel_bins) -> (batch, 1, time_steps, mel_bins)
        x = x.unsqueeze(1)
        x = x.transpose(1, 3)
        x = self.bn0(x)
        x = x.transpose(1, 3)

        x = self.conv_block1(x, pool_size=(2, 2), pool_type="avg")
        x = F.dropout(x, p=0.2, training=self.training)
        x = self.conv_block2(x, pool_size=(2, 2), pool_type="avg")
        x = F.dropout(x, p=0.2, training=self.training)
        x = self.conv_block3(x, pool_size=(2, 2), pool_type="avg")
        x = F.dropout(x, p=0.2, training=self.training)
        x = self.conv_block4(x, pool_size=(2, 2), pool_type="avg")
        x = F.dropout(x, p=0.2, training=self.training)
        x = self.conv_block5(x, pool_size=(2, 2), pool_type="avg")
        x = F.dropout(x, p=0.2, training=self.training)
        x = self.conv_block6(x, pool_size=(1, 1), pool_type="avg")
        x = F.dropout(x, p=0.2, training=self.training)
        x = torch.mean(x, dim=3)                 # 在频率维上求平均

        (x1, _) = torch.max(x, dim=2)             # 时间维上 max + mean
        x2 = torch.mean(x, dim=2)
        x = x1 + x2
        x = F.dropout(x, p=0.5, training=self.training)
        x = F.relu_(self.fc1(x))
        embedding = F.dropout(x, p=0.5, training=self.training)
        clipwise_output = torch.sigmoid(self.fc_audioset(x))
        return {"clipwise_output": clipwise_output, "embedding": embedding}


def main():
    device = torch.device("cuda")
    model = Cnn14(mel_bins=N_MELS, classes_num=CLASSES_NUM).to(device)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"Cnn14 参数量: {n_params / 1e6:.1f}M, 帧数 {N_FRAMES}")

    loader = DataLoader(MelFeatureDataset(BATCH_SIZE * MAX_ITERATIONS), batch_size=BATCH_SIZE,
                        shuffle=True, num_workers=4, pin_memory=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE, betas=(0.9, 0.999), eps=1e-8,
                                 weight_decay=0.0, amsgrad=True)

    iteration = 0
    t0 = time.time()
    model.train()
    for batch_feat, batch_target in loader:
        batch_feat = batch_feat.to(device, non_blocking=True)
        batch_target = batch_target.to(device, non_blocking=True)

        output = model(batch_feat)
        # 多标签二分类损失
        loss = F.binary_cross_entropy(output["clipwise_output"], batch_target)

        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        iteration += 1
        print(f"iteration {iteration}, loss {loss.item():.4f}, {time.time() - t0:.1f}s")
        if iteration >= MAX_ITERATIONS:
            break

    print(f"显存峰值: {torch.cuda.max_memory_allocated() / 1024 ** 3:.2f} GiB")


if __name__ == "__main__":
    main()
