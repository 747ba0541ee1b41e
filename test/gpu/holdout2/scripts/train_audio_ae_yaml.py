# 语音波形自编码器(1D 卷积),配置写在 configs/audio_ae.yaml 里。
# 整个模型直接转成 bf16 训练(不用 autocast),H100/H200 上 bf16 足够稳定。
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
import yaml
from torch.utils.data import DataLoader, Dataset

CFG_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "configs", "audio_ae.yaml")
with open(CFG_FILE, "r", encoding="utf-8") as fh:
    cfg = yaml.safe_load(fh)

SR = cfg["data"]["sample_rate"]
SEGMENT = int(SR * cfg["data"]["segment_seconds"])   # 每条样本的采样点数
DTYPE = getattr(torch, cfg["train"]["dtype"])


class WaveSegments(Dataset):
    def __init__(self, n, length):
        self.n, self.length = n, length

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        # 随机正弦叠加 + 噪声,当作"语音"
        t = torch.arange(self.length) / SR
        f0 = 80 + 300 * torch.rand(1)
        wav = 0.5 * torch.sin(2 * torch.pi * f0 * t) + 0.05 * torch.randn(self.length)
        return wav.unsqueeze(0)   # (1, T)


class ResUnit(nn.Module):
    def __init__(self, ch, k, dilation):
        super().__init__()
        pad = (k - 1) // 2 * dilation
        self.block = nn.Sequential(
            nn.GroupNorm(8, ch),
            nn.SiLU(),
            nn.Conv1d(ch, ch, k, padding=pad, dilation=dilation),
            nn.GroupNorm(8, ch),
            nn.SiLU(),
            nn.Conv1d(ch, ch, 1),
        )

    def forward(self, x):
        return x + self.block(x)


class Stage(nn.Module):
    """一个下采样(或上采样)阶段:若干残差单元 + stride 2 卷积。"""

    def __init__(self, c_in, c_out, k, n_res, up=False):
        super().__init__()
        self.res = nn.Sequential(*[ResUnit(c_in, k, 3 ** i) for i in range(n_res)])
        if up:
            self.resample = nn.ConvTranspose1d(c_in, c_out, 4, stride=2, padding=1)
        else:
            self.resample = nn.Conv1d(c_in, c_out, 4, stride=2, padding=1)

    def forward(self, x):
        return self.resample(self.res(x))


class WaveAE(nn.Module):
    def __init__(self, channels, k, n_res, latent):
        super().__init__()
        self.inp = nn.Conv1d(1, channels[0], k, padding=k // 2)
        enc = []
        for a, b in zip(channels[:-1], channels[1:]):
            enc.append(Stage(a, b, k, n_res))
        self.encoder = nn.Sequential(*enc)
        self.to_latent = nn.Conv1d(channels[-1], latent, 1)
        self.from_latent = nn.Conv1d(latent, channels[-1], 1)
        rev = channels[::-1]
        self.decoder = nn.Sequential(*[Stage(a, b, k, n_res, up=True) for a, b in zip(rev[:-1], rev[1:])])
        self.out = nn.Conv1d(channels[0], 1, k, padding=k // 2)

    def forward(self, wav):
        z = self.to_latent(self.encoder(self.inp(wav)))
        return torch.tanh(self.out(self.decoder(self.from_latent(z))))


mcfg, tcfg = cfg["model"], cfg["train"]
model = WaveAE(mcfg["channels"], mcfg["kernel_size"], mcfg["res_blocks_per_stage"], mcfg["latent_dim"])
model = model.to(device="cuda", dtype=DTYPE)     # 权重直接是 bf16
n_params = sum(p.numel() for p in model.parameters())
print(f"参数量 {n_params / 1e6:.2f}M, dtype={DTYPE}, 每条样本 {SEGMENT} 个采样点")

optimizer = torch.optim.Adam(model.parameters(), lr=tcfg["lr"], betas=tuple(tcfg["betas"]), eps=1e-6)
train_dl = DataLoader(WaveSegments(cfg["data"]["num_train"], SEGMENT), batch_size=tcfg["batch_size"],
                      shuffle=True, drop_last=True)
val_dl = DataLoader(WaveSegments(cfg["data"]["num_val"], SEGMENT), batch_size=tcfg["batch_size"])

step = 0
t0 = time.time()
while step < tcfg["max_steps"]:
    for wav in train_dl:
        wav = wav.to("cuda", dtype=DTYPE)
        recon = model(wav)
        loss = F.l1_loss(recon, wav) + F.mse_loss(recon, wav)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        step += 1
        print(f"step {step} loss {loss.item():.4f} ({time.time() - t0:.1f}s)")
        if step >= tcfg["max_steps"]:
            break

# 验证:只算 L1
model.eval()
with torch.no_grad():
    errs = [F.l1_loss(model(w.to("cuda", dtype=DTYPE)), w.to("cuda", dtype=DTYPE)).item() for w in val_dl]
print("val L1:", sum(errs) / len(errs))
