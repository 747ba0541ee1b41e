# -*- coding: utf-8 -*-
"""DeepSpeech2 风格的中文语音识别：两层 Conv2d 下采样 + 5 层双向 GRU + CTC。

变长语音：collate_fn 把每个 batch 补齐到该 batch 中最长的一条，GRU 用 pack_padded_sequence。
fp16 混合精度 + GradScaler。数据是随机生成的频谱（161 维线性谱，10ms 一帧）。
"""
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
from torch.utils.data import DataLoader, Dataset


@dataclass
class DS2Config:
    n_freq: int = 161            # 线性谱维度 (n_fft=320)
    conv_channels: int = 32
    rnn_hidden: int = 800
    rnn_layers: int = 5
    vocab_size: int = 4336       # 常用汉字 + blank
    batch_size: int = 32
    min_frames: int = 800
    max_frames: int = 1600       # 最长 16 秒
    steps: int = 6
    lr: float = 3e-4

    @property
    def freq_after_conv(self) -> int:
        f = (self.n_freq + 2 * 20 - 41) // 2 + 1      # conv1: kernel 41, stride 2
        f = (f + 2 * 10 - 21) // 2 + 1                # conv2: kernel 21, stride 2
        return f

    @property
    def rnn_input_size(self) -> int:
        return self.conv_channels * self.freq_after_conv


cfg = DS2Config()


class RandomSpeech(Dataset):
    def __len__(self):
        return cfg.batch_size * cfg.steps

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        T = int(torch.randint(cfg.min_frames, cfg.max_frames + 1, (1,), generator=g))
        spec = torch.randn(cfg.n_freq, T, generator=g)
        n_chars = int(torch.randint(10, T // 16, (1,), generator=g))   # 每秒 ~6 个字
        text = torch.randint(1, cfg.vocab_size, (n_chars,), generator=g)
        return spec, text


def collate(batch):
    # 补齐到 batch 内最长
    specs, texts = zip(*batch)
    lens = torch.tensor([s.shape[1] for s in specs])
    T = int(lens.max())
    x = torch.zeros(len(specs), 1, cfg.n_freq, T)
    for i, s in enumerate(specs):
        x[i, 0, :, : s.shape[1]] = s
    tgt_lens = torch.tensor([len(t) for t in texts])
    targets = torch.cat(texts)
    return x, lens, targets, tgt_lens


class DeepSpeech2(nn.Module):
    def __init__(self, c: DS2Config):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(1, c.conv_channels, (41, 11), stride=(2, 2), padding=(20, 5), bias=False),
            nn.BatchNorm2d(c.conv_channels), nn.Hardtanh(0, 20, inplace=True),
            nn.Conv2d(c.conv_channels, c.conv_channels, (21, 11), stride=(2, 1), padding=(10, 5), bias=False),
            nn.BatchNorm2d(c.conv_channels), nn.Hardtanh(0, 20, inplace=True),
        )
        self.rnn = nn.GRU(c.rnn_input_size, c.rnn_hidden, num_layers=c.rnn_layers, bidirectional=True)
        self.norm = nn.LayerNorm(2 * c.rnn_hidden)
        self.fc = nn.Linear(2 * c.rnn_hidden, c.vocab_size)

    @staticmethod
    def out_lengths(lens):
        return (lens + 2 * 5 - 11) // 2 + 1      # 只有 conv1 在时间轴上步长为 2

    def forward(self, x, lens):
        x = self.conv(x)                               # (B, C, F', T')
        B, C, Fq, T = x.shape
        x = x.view(B, C * Fq, T).permute(2, 0, 1)      # (T', B, C*F')
        out_lens = self.out_lengths(lens)
        packed = pack_padded_sequence(x, out_lens.cpu(), enforce_sorted=False)
        y, _ = self.rnn(packed)
        y, _ = pad_packed_sequence(y, total_length=T)
        return self.fc(self.norm(y)), out_lens         # (T', B, V)


def main():
    device = "cuda"
    model = DeepSpeech2(cfg).to(device)
    print(f"参数量: {sum(p.numel() for p in model.parameters()) / 1e6:.1f}M, rnn 输入 {cfg.rnn_input_size}")
    loader = DataLoader(RandomSpeech(), batch_size=cfg.batch_size, collate_fn=collate, num_workers=4)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr)
    scaler = torch.amp.GradScaler()

    model.train()
    for step, (x, lens, targets, tgt_lens) in enumerate(loader):
        x, lens = x.to(device), lens.to(device)
        with torch.autocast("cuda", dtype=torch.float16):
            logits, out_lens = model(x, lens)
        # CTC 在 fp32 下算
        log_probs = logits.float().log_softmax(-1)
        loss = F.ctc_loss(log_probs, targets.to(device), out_lens, tgt_lens.to(device), blank=0,
                          zero_infinity=True)
        opt.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        nn.utils.clip_grad_norm_(model.parameters(), 400)
        scaler.step(opt)
        scaler.update()
        print(f"step {step} T={x.shape[-1]} loss {loss.item():.3f}")

    print(f"显存峰值 {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
