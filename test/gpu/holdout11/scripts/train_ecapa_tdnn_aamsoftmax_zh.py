"""说话人识别：ECAPA-TDNN + AAM-Softmax（VoxCeleb2 风格，5994 个说话人）。

特征：在 GPU 上用 torch.stft 计算 80 维 log-mel fbank（mel 滤波器组手写）。
数据是随机波形，只为跑通训练流程。
"""
from functools import partial
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

# ---- 配置 ----
SAMPLE_RATE = 16000
SEGMENT_SECONDS = 3
NUM_SAMPLES = SAMPLE_RATE * SEGMENT_SECONDS  # 48000 个采样点
N_FFT, WIN_LENGTH, HOP_LENGTH, N_MELS = 512, 400, 160, 80
CHANNELS = 1024  # ECAPA 的 C
EMBED_DIM = 192
NUM_SPEAKERS = 5994
BATCH_SIZE = 128
STEPS = 4

BN1d = partial(nn.BatchNorm1d, momentum=0.1)  # 所有 BN 用同一个工厂


def mel_filterbank(n_mels, n_fft, sr, fmin=20.0, fmax=7600.0):
    """手写 HTK 风格的三角 mel 滤波器，形状 (n_fft//2+1, n_mels)"""
    hz2mel = lambda f: 2595.0 * math.log10(1.0 + f / 700.0)
    mels = torch.linspace(hz2mel(fmin), hz2mel(fmax), n_mels + 2)
    hz = 700.0 * (10 ** (mels / 2595.0) - 1.0)
    bins = torch.linspace(0, sr / 2, n_fft // 2 + 1)
    fb = torch.zeros(n_fft // 2 + 1, n_mels)
    for m in range(n_mels):
        left, center, right = hz[m], hz[m + 1], hz[m + 2]
        up = (bins - left) / (center - left)
        down = (right - bins) / (right - center)
        fb[:, m] = torch.clamp(torch.minimum(up, down), min=0.0)
    return fb


class Fbank(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("window", torch.hamming_window(WIN_LENGTH))
        self.register_buffer("fb", mel_filterbank(N_MELS, N_FFT, SAMPLE_RATE))

    @torch.no_grad()
    def forward(self, wav):  # (B, T)
        wav = torch.cat([wav[:, :1], wav[:, 1:] - 0.97 * wav[:, :-1]], dim=1)  # 预加重
        spec = torch.stft(wav, N_FFT, HOP_LENGTH, WIN_LENGTH, self.window, return_complex=True)
        power = spec.abs() ** 2                               # (B, F, frames)
        mel = torch.matmul(power.transpose(1, 2), self.fb)    # (B, frames, n_mels)
        logmel = torch.log(mel + 1e-6).transpose(1, 2)
        return logmel - logmel.mean(dim=-1, keepdim=True)     # 每句做均值归一化


class SEModule(nn.Module):
    def __init__(self, channels, bottleneck=128):
        super().__init__()
        self.se = nn.Sequential(nn.AdaptiveAvgPool1d(1), nn.Conv1d(channels, bottleneck, 1), nn.ReLU(),
                                nn.Conv1d(bottleneck, channels, 1), nn.Sigmoid())

    def forward(self, x):
        return x * self.se(x)


class Bottle2neck(nn.Module):
    """SE-Res2Block：1x1 卷积 -> Res2Net 分组空洞卷积 -> 1x1 卷积 -> SE"""

    def __init__(self, c, kernel_size, dilation, scale=8):
        super().__init__()
        width = c // scale
        self.width, self.nums = width, scale - 1
        self.conv1, self.bn1 = nn.Conv1d(c, width * scale, 1), BN1d(width * scale)
        pad = math.floor(kernel_size / 2) * dilation
        self.convs = nn.ModuleList([nn.Conv1d(width, width, kernel_size, dilation=dilation, padding=pad)
                                    for _ in range(self.nums)])
        self.bns = nn.ModuleList([BN1d(width) for _ in range(self.nums)])
        self.conv3, self.bn3 = nn.Conv1d(width * scale, c, 1), BN1d(c)
        self.relu = nn.ReLU()
        self.se = SEModule(c)

    def forward(self, x):
        residual = x
        out = self.bn1(self.relu(self.conv1(x)))
        spx = torch.split(out, self.width, 1)
        outs = []
        for i in range(self.nums):
            sp = spx[i] if i == 0 else sp + spx[i]
            sp = self.bns[i](self.relu(self.convs[i](sp)))
            outs.append(sp)
        outs.append(spx[self.nums])
        out = torch.cat(outs, 1)
        out = self.bn3(self.relu(self.conv3(out)))
        return self.se(out) + residual


class ECAPA_TDNN(nn.Module):
    def __init__(self, C=CHANNELS):
        super().__init__()
        self.fbank = Fbank()
        self.conv1, self.bn1 = nn.Conv1d(N_MELS, C, 5, padding=2), BN1d(C)
        self.relu = nn.ReLU()
        self.layer1 = Bottle2neck(C, 3, 2)
        self.layer2 = Bottle2neck(C, 3, 3)
        self.layer3 = Bottle2neck(C, 3, 4)
        self.layer4 = nn.Conv1d(3 * C, 1536, 1)  # 多层特征聚合 (MFA)
        # 注意力统计池化 (ASP)
        self.attention = nn.Sequential(nn.Conv1d(4608, 256, 1), nn.ReLU(), BN1d(256), nn.Tanh(),
                                       nn.Conv1d(256, 1536, 1), nn.Softmax(dim=2))
        self.bn5 = BN1d(3072)
        self.fc6 = nn.Linear(3072, EMBED_DIM)
        self.bn6 = BN1d(EMBED_DIM)

    def forward(self, wav):
        x = self.fbank(wav)
        x = self.bn1(self.relu(self.conv1(x)))
        x1 = self.layer1(x)
        x2 = self.layer2(x + x1)
        x3 = self.layer3(x + x1 + x2)
        x = self.relu(self.layer4(torch.cat((x1, x2, x3), dim=1)))
        t = x.size(-1)
        global_x = torch.cat((x, torch.mean(x, dim=2, keepdim=True).repeat(1, 1, t),
                              torch.sqrt(torch.var(x, dim=2, keepdim=True).clamp(min=1e-4)).repeat(1, 1, t)), dim=1)
        w = self.attention(global_x)
        mu = torch.sum(x * w, dim=2)
        sg = torch.sqrt((torch.sum((x ** 2) * w, dim=2) - mu ** 2).clamp(min=1e-4))
        x = self.bn5(torch.cat((mu, sg), 1))
        return self.bn6(self.fc6(x))


class AAMSoftmax(nn.Module):
    def __init__(self, n_class, m=0.2, s=30):
        super().__init__()
        self.m, self.s = m, s
        self.weight = nn.Parameter(torch.empty(n_class, EMBED_DIM))
        nn.init.xavier_normal_(self.weight, gain=1)
        self.cos_m, self.sin_m = math.cos(m), math.sin(m)
        self.th, self.mm = math.cos(math.pi - m), math.sin(math.pi - m) * m

    def forward(self, x, label):
        cosine = F.linear(F.normalize(x.float()), F.normalize(self.weight.float()))
        sine = torch.sqrt((1.0 - cosine * cosine).clamp(0, 1))
        phi = cosine * self.cos_m - sine * self.sin_m
        phi = torch.where((cosine - self.th) > 0, phi, cosine - self.mm)
        one_hot = torch.zeros_like(cosine).scatter_(1, label.view(-1, 1), 1)
        output = (one_hot * phi + (1.0 - one_hot) * cosine) * self.s
        return F.cross_entropy(output, label)


class RandomUtterances(Dataset):
    def __len__(self):
        return BATCH_SIZE * STEPS

    def __getitem__(self, i):
        return torch.randn(NUM_SAMPLES) * 0.1, torch.randint(0, NUM_SPEAKERS, ()).item()


def main():
    device = "cuda"
    model = ECAPA_TDNN().to(device)
    criterion = AAMSoftmax(NUM_SPEAKERS).to(device)
    optimizer = torch.optim.Adam(list(model.parameters()) + list(criterion.parameters()), lr=1e-3, weight_decay=2e-5)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.97)
    scaler = torch.amp.GradScaler("cuda")
    loader = DataLoader(RandomUtterances(), batch_size=BATCH_SIZE, shuffle=True, num_workers=4, drop_last=True)

    model.train()
    for step, (wav, spk) in enumerate(loader):
        wav, spk = wav.to(device), spk.to(device)
        with torch.autocast("cuda", dtype=torch.float16):
            emb = model(wav)
        loss = criterion(emb, spk)  # 损失在 fp32 下计算
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        print(f"第 {step} 步, loss = {loss.item():.4f}")
    scheduler.step()


if __name__ == "__main__":
    main()
