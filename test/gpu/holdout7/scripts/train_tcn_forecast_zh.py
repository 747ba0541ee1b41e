# -*- coding: utf-8 -*-
# 多变量时间序列预测：一维空洞卷积（TCN 风格）编码器 + 线性预测头
# 数据：321 个变量（类似 electricity 数据集），输入窗口 720，预测未来 96 步
# 数据集是滑动窗口：一整条长序列，__getitem__ 里切片
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

# ===== 配置 =====
N_VARS = 321
LOOKBACK = 720        # 输入长度
HORIZON = 96          # 预测长度
HIDDEN = 256
N_LEVELS = 8          # 空洞率 1,2,4,...,128
KERNEL = 3
BATCH = 256
EPOCHS = 1
MAX_STEPS = 6
LR = 1e-3


class SlidingWindow(Dataset):
    def __init__(self, series, lookback, horizon):
        self.s = series                      # (T, N_VARS)
        self.lb, self.h = lookback, horizon

    def __len__(self):
        return self.s.shape[0] - self.lb - self.h + 1

    def __getitem__(self, i):
        x = self.s[i:i + self.lb]
        y = self.s[i + self.lb:i + self.lb + self.h]
        return x, y


class CausalConvBlock(nn.Module):
    """因果卷积残差块：左侧补零，保证不看未来"""

    def __init__(self, c_in, c_out, k, dilation, dropout=0.1):
        super().__init__()
        self.pad = (k - 1) * dilation
        self.conv1 = nn.Conv1d(c_in, c_out, k, dilation=dilation)
        self.conv2 = nn.Conv1d(c_out, c_out, k, dilation=dilation)
        self.norm1 = nn.BatchNorm1d(c_out)
        self.norm2 = nn.BatchNorm1d(c_out)
        self.act = nn.GELU()
        self.drop = nn.Dropout(dropout)
        self.down = nn.Conv1d(c_in, c_out, 1) if c_in != c_out else None

    def forward(self, x):
        h = self.conv1(nn.functional.pad(x, (self.pad, 0)))
        h = self.drop(self.act(self.norm1(h)))
        h = self.conv2(nn.functional.pad(h, (self.pad, 0)))
        h = self.drop(self.act(self.norm2(h)))
        res = x if self.down is None else self.down(x)
        return self.act(h + res)


class TCNForecaster(nn.Module):
    def __init__(self, n_vars, hidden, levels, k, lookback, horizon):
        super().__init__()
        layers = []
        c = n_vars
        for i in range(levels):
            layers.append(CausalConvBlock(c, hidden, k, dilation=2 ** i))
            c = hidden
        self.tcn = nn.Sequential(*layers)
        # 用最后 16 个时间步的特征做预测
        self.head = nn.Linear(hidden * 16, n_vars * horizon)
        self.horizon, self.n_vars = horizon, n_vars

    def forward(self, x):                    # x: (B, L, V)
        # 实例归一化（RevIN 的简化版）
        mean = x.mean(1, keepdim=True)
        std = x.std(1, keepdim=True) + 1e-5
        x = (x - mean) / std
        h = self.tcn(x.transpose(1, 2))      # (B, H, L)
        h = h[:, :, -16:].flatten(1)
        y = self.head(h).view(-1, self.horizon, self.n_vars)
        return y * std + mean


def train():
    torch.manual_seed(0)
    series = torch.randn(26304, N_VARS).cumsum(0) * 0.01   # 随机游走代替真实数据
    ds = SlidingWindow(series, LOOKBACK, HORIZON)
    dl = DataLoader(ds, batch_size=BATCH, shuffle=True, num_workers=2, drop_last=True)

    model = TCNForecaster(N_VARS, HIDDEN, N_LEVELS, KERNEL, LOOKBACK, HORIZON).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=LR)
    loss_fn = nn.MSELoss()
    print("参数量:", sum(p.numel() for p in model.parameters()))

    step = 0
    for epoch in range(EPOCHS):
        model.train()
        for x, y in dl:
            x, y = x.cuda(), y.cuda()
            pred = model(x)
            loss = loss_fn(pred, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            print(f"epoch {epoch} step {step} mse {loss.item():.4f}")
            if step >= MAX_STEPS:   # 只跑几步
                return


if __name__ == "__main__":
    train()
