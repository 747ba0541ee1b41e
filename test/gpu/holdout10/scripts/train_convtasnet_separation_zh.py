"""Conv-TasNet 语音分离训练脚本（两个说话人，8 kHz，4 秒片段）。

数据是随机生成的（混合 = 两个"说话人"信号相加），只为跑通流程。
"""
from dataclasses import dataclass
from itertools import permutations

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


@dataclass
class TasNetConfig:
    # 编码器 / 解码器
    N: int = 512      # 滤波器个数
    L: int = 16       # 滤波器长度（采样点）
    # 分离网络（TCN）
    B: int = 128      # bottleneck 通道
    H: int = 512      # 卷积块内部通道
    P: int = 3        # 卷积核大小
    X: int = 8        # 每个 repeat 里的块数
    R: int = 3        # repeat 次数
    n_src: int = 2
    # 训练
    sample_rate: int = 8000
    segment_seconds: float = 4.0
    batch_size: int = 8
    lr: float = 1e-3
    steps: int = 6

    @property
    def segment_samples(self) -> int:
        return int(self.sample_rate * self.segment_seconds)


class GlobalLayerNorm(nn.Module):
    """gLN：在通道和时间两个维度上做归一化。"""

    def __init__(self, channels, eps=1e-8):
        super().__init__()
        self.gamma = nn.Parameter(torch.ones(1, channels, 1))
        self.beta = nn.Parameter(torch.zeros(1, channels, 1))
        self.eps = eps

    def forward(self, x):
        mean = x.mean(dim=(1, 2), keepdim=True)
        var = ((x - mean) ** 2).mean(dim=(1, 2), keepdim=True)
        return self.gamma * (x - mean) / torch.sqrt(var + self.eps) + self.beta


class TemporalBlock(nn.Module):
    def __init__(self, B, H, P, dilation):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv1d(B, H, 1),
            nn.PReLU(),
            GlobalLayerNorm(H),
            # 深度可分离卷积，padding 保证长度不变（非因果）
            nn.Conv1d(H, H, P, padding=dilation * (P - 1) // 2, dilation=dilation, groups=H),
            nn.PReLU(),
            GlobalLayerNorm(H),
        )
        self.res_out = nn.Conv1d(H, B, 1)
        self.skip_out = nn.Conv1d(H, B, 1)

    def forward(self, x):
        y = self.net(x)
        return x + self.res_out(y), self.skip_out(y)


class ConvTasNet(nn.Module):
    def __init__(self, c: TasNetConfig):
        super().__init__()
        self.c = c
        self.encoder = nn.Conv1d(1, c.N, c.L, stride=c.L // 2, bias=False)
        self.ln = GlobalLayerNorm(c.N)
        self.bottleneck = nn.Conv1d(c.N, c.B, 1)
        # 每个 repeat 内的膨胀率是 1, 2, 4, ..., 2^(X-1)
        self.blocks = nn.ModuleList([TemporalBlock(c.B, c.H, c.P, 2 ** x) for _ in range(c.R) for x in range(c.X)])
        self.mask = nn.Sequential(nn.PReLU(), nn.Conv1d(c.B, c.n_src * c.N, 1))
        self.decoder = nn.ConvTranspose1d(c.N, 1, c.L, stride=c.L // 2, bias=False)

    def forward(self, mix):                      # mix: (B, T)
        w = torch.relu(self.encoder(mix.unsqueeze(1)))   # (B, N, K)
        x = self.bottleneck(self.ln(w))
        skip_sum = 0
        for blk in self.blocks:
            x, s = blk(x)
            skip_sum = skip_sum + s
        m = torch.sigmoid(self.mask(skip_sum)).view(w.size(0), self.c.n_src, self.c.N, -1)
        est = self.decoder((w.unsqueeze(1) * m).view(-1, self.c.N, w.size(-1)))
        return est.view(w.size(0), self.c.n_src, -1)[..., :mix.size(-1)]


def si_snr(est, ref, eps=1e-8):
    est = est - est.mean(-1, keepdim=True)
    ref = ref - ref.mean(-1, keepdim=True)
    proj = (est * ref).sum(-1, keepdim=True) * ref / (ref.pow(2).sum(-1, keepdim=True) + eps)
    noise = est - proj
    return 10 * torch.log10(proj.pow(2).sum(-1) / (noise.pow(2).sum(-1) + eps) + eps)


def pit_si_snr_loss(est, ref):
    # 排列不变训练（PIT）：取所有说话人排列中最好的一个
    n_src = ref.size(1)
    scores = torch.stack([si_snr(est[:, list(p)], ref).mean(1) for p in permutations(range(n_src))], dim=1)
    return -scores.max(dim=1).values.mean()


class MixtureSet(Dataset):
    def __init__(self, n, samples, n_src):
        self.n, self.samples, self.n_src = n, samples, n_src

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        srcs = torch.randn(self.n_src, self.samples) * torch.rand(self.n_src, 1)
        return srcs.sum(0), srcs


def main():
    cfg = TasNetConfig()
    device = torch.device("cuda")
    model = ConvTasNet(cfg).to(device)
    print("参数量: %.2fM" % (sum(p.numel() for p in model.parameters()) / 1e6))
    loader = DataLoader(MixtureSet(cfg.batch_size * cfg.steps, cfg.segment_samples, cfg.n_src),
                        batch_size=cfg.batch_size, shuffle=True, num_workers=2)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    for step, (mix, srcs) in enumerate(loader):
        mix, srcs = mix.to(device), srcs.to(device)
        est = model(mix)
        loss = pit_si_snr_loss(est, srcs)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)  # 论文里的梯度裁剪
        opt.step()
        print(f"step {step}: SI-SNR {-loss.item():.2f} dB")
    print("显存峰值 GiB:", torch.cuda.max_memory_allocated() / 2**30)


if __name__ == "__main__":
    main()
