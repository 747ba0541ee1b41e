# -*- coding: utf-8 -*-
"""关键词检测 (KWS) —— 时间卷积网络 TCN，输入是 log-mel 特征。

配置写在 Cfg 类里；帧数由采样率、时长、帧移算出来。
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class Cfg:
    sample_rate = 16000
    seconds = 20                       # 长音频片段
    hop_length = sample_rate // 100    # 10ms 帧移
    n_mels = 80
    frames = seconds * sample_rate // hop_length   # = 2000 帧
    num_blocks = 10
    kernel_size = 3
    num_keywords = 35
    batch_size = 32
    lr = 0.1
    weight_decay = 1e-4
    epochs = 1
    steps_per_epoch = 6


class FbankSet(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, idx):
        feats = torch.randn(Cfg.n_mels, Cfg.frames)       # (特征维, 帧数)
        label = torch.randint(0, Cfg.num_keywords, (1,)).item()
        return feats, label


class TemporalBlock(nn.Module):
    def __init__(self, c_in, c_out, k, dilation, dropout=0.1):
        super().__init__()
        pad = (k - 1) * dilation // 2
        self.conv1 = nn.Conv1d(c_in, c_out, k, padding=pad, dilation=dilation)
        self.bn1 = nn.BatchNorm1d(c_out)
        self.conv2 = nn.Conv1d(c_out, c_out, k, padding=pad, dilation=dilation)
        self.bn2 = nn.BatchNorm1d(c_out)
        self.drop = nn.Dropout(dropout)
        # 通道数变化时用 1x1 卷积对齐残差
        self.res = nn.Conv1d(c_in, c_out, 1) if c_in != c_out else nn.Identity()

    def forward(self, x):
        y = self.drop(F.relu(self.bn1(self.conv1(x))))
        y = self.bn2(self.conv2(y))
        return F.relu(y + self.res(x))


class TCN(nn.Module):
    def __init__(self, n_mels, num_blocks, k, num_classes):
        super().__init__()
        blocks = []
        c_in = n_mels
        for i in range(num_blocks):
            c_out = 256 if i < num_blocks // 2 else 512      # 后半部分加宽
            blocks.append(TemporalBlock(c_in, c_out, k, dilation=2 ** (i % 5)))
            c_in = c_out
        self.body = nn.Sequential(*blocks)
        self.fc = nn.Linear(c_in, num_classes)

    def forward(self, x):
        h = self.body(x)
        return self.fc(h.mean(dim=-1))   # 全局平均池化


def train(model, loader, opt, device):
    model.train()
    for step, (x, y) in enumerate(loader):
        x, y = x.to(device), y.to(device)
        logits = model(x)
        loss = F.cross_entropy(logits, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step", step, "loss", round(loss.item(), 4))


if __name__ == "__main__":
    device = "cuda"
    model = TCN(Cfg.n_mels, Cfg.num_blocks, Cfg.kernel_size, Cfg.num_keywords).to(device)
    # 纯 SGD（不带动量），fp32 训练
    opt = torch.optim.SGD(model.parameters(), lr=Cfg.lr, weight_decay=Cfg.weight_decay)
    loader = DataLoader(FbankSet(Cfg.batch_size * Cfg.steps_per_epoch), batch_size=Cfg.batch_size, shuffle=True)
    for epoch in range(Cfg.epochs):
        train(model, loader, opt, device)
    print("峰值显存 %.2f GiB" % (torch.cuda.max_memory_allocated() / 2 ** 30))
