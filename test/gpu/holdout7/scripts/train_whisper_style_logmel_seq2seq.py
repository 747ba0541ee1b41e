"""Speech-to-text, Whisper-style, written by hand.

The log-mel front-end runs on the GPU inside the model (torch.stft + a mel filterbank buffer), then two Conv1d
(the second with stride 2) halve 3000 frames of a 30 s clip to 1500, sinusoidal positions, a pre-norm Transformer
encoder, and an nn.TransformerDecoder with a tied token embedding trained with teacher forcing.
fp16 autocast + GradScaler, AdamW.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

cfg = {
    "sample_rate": 16000, "n_fft": 400, "hop": 160, "n_mels": 80, "clip_seconds": 30,
    "d_model": 512, "enc_layers": 6, "dec_layers": 6, "heads": 8,
    "vocab": 51865, "max_text_len": 448, "text_len": 128,
    "batch_size": 48, "lr": 1e-4, "steps": 4,
}


def mel_filterbank(sr, n_fft, n_mels):
    def hz_to_mel(f):
        return 2595.0 * math.log10(1.0 + f / 700.0)

    mels = torch.linspace(hz_to_mel(0.0), hz_to_mel(sr / 2), n_mels + 2)
    hz = 700.0 * (10 ** (mels / 2595.0) - 1.0)
    bins = torch.floor((n_fft + 1) * hz / sr).long()
    fb = torch.zeros(n_mels, n_fft // 2 + 1)
    for m in range(1, n_mels + 1):
        l, c, r = bins[m - 1].item(), bins[m].item(), bins[m + 1].item()
        for k in range(l, c):
            fb[m - 1, k] = (k - l) / max(c - l, 1)
        for k in range(c, r):
            fb[m - 1, k] = (r - k) / max(r - c, 1)
    return fb


class LogMel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.n_fft, self.hop = c["n_fft"], c["hop"]
        self.register_buffer("window", torch.hann_window(c["n_fft"]))
        self.register_buffer("fb", mel_filterbank(c["sample_rate"], c["n_fft"], c["n_mels"]))

    @torch.no_grad()
    @torch.autocast("cuda", enabled=False)   # keep the front-end in fp32
    def forward(self, wav):
        spec = torch.stft(wav.float(), self.n_fft, self.hop, window=self.window, return_complex=True)
        power = spec[..., :-1].abs() ** 2                  # (B, 201, 3000)
        mel = self.fb @ power
        logmel = torch.clamp(mel, min=1e-10).log10()
        logmel = torch.maximum(logmel, logmel.amax(dim=(1, 2), keepdim=True) - 8.0)
        return (logmel + 4.0) / 4.0


def sinusoids(length, channels):
    inc = math.log(10000) / (channels // 2 - 1)
    inv = torch.exp(-inc * torch.arange(channels // 2))
    t = torch.arange(length)[:, None] * inv[None]
    return torch.cat([t.sin(), t.cos()], dim=1)


class AudioEncoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        d = c["d_model"]
        self.conv1 = nn.Conv1d(c["n_mels"], d, 3, padding=1)
        self.conv2 = nn.Conv1d(d, d, 3, stride=2, padding=1)
        n_ctx = c["clip_seconds"] * c["sample_rate"] // c["hop"] // 2
        self.register_buffer("pos", sinusoids(n_ctx, d))
        layer = nn.TransformerEncoderLayer(d, c["heads"], 4 * d, dropout=0.0, activation="gelu",
                                           batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, c["enc_layers"])
        self.ln = nn.LayerNorm(d)

    def forward(self, mel):
        x = F.gelu(self.conv1(mel))
        x = F.gelu(self.conv2(x)).transpose(1, 2)
        x = x + self.pos[: x.shape[1]]
        return self.ln(self.blocks(x))


class TextDecoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        d = c["d_model"]
        self.tok = nn.Embedding(c["vocab"], d)
        self.pos = nn.Parameter(torch.zeros(c["max_text_len"], d))
        layer = nn.TransformerDecoderLayer(d, c["heads"], 4 * d, dropout=0.0, activation="gelu",
                                           batch_first=True, norm_first=True)
        self.blocks = nn.TransformerDecoder(layer, c["dec_layers"])
        self.ln = nn.LayerNorm(d)

    def forward(self, tokens, audio):
        T = tokens.shape[1]
        x = self.tok(tokens) + self.pos[:T]
        mask = nn.Transformer.generate_square_subsequent_mask(T, device=tokens.device)
        x = self.ln(self.blocks(x, audio, tgt_mask=mask, tgt_is_causal=True))
        return x @ self.tok.weight.t()                    # tied output projection


class SpeechToText(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.frontend = LogMel(c)
        self.encoder = AudioEncoder(c)
        self.decoder = TextDecoder(c)

    def forward(self, wav, tokens):
        return self.decoder(tokens, self.encoder(self.frontend(wav)))


class Clips(Dataset):
    def __init__(self, c, n):
        self.samples = c["clip_seconds"] * c["sample_rate"]
        self.c, self.n = c, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        wav = torch.randn(self.samples) * 0.05
        toks = torch.randint(0, self.c["vocab"], (self.c["text_len"] + 1,))
        return wav, toks


def main():
    model = SpeechToText(cfg).cuda()
    print(sum(p.numel() for p in model.parameters()) / 1e6, "M params")
    opt = torch.optim.AdamW(model.parameters(), lr=cfg["lr"], weight_decay=0.01)
    scaler = torch.amp.GradScaler("cuda")
    dl = DataLoader(Clips(cfg, cfg["batch_size"] * cfg["steps"]), batch_size=cfg["batch_size"], num_workers=2)
    model.train()
    for step, (wav, toks) in enumerate(dl):
        wav, toks = wav.cuda(), toks.cuda()
        inp, tgt = toks[:, :-1], toks[:, 1:]
        with torch.autocast("cuda", dtype=torch.float16):
            logits = model(wav, inp)
        loss = F.cross_entropy(logits.float().reshape(-1, cfg["vocab"]), tgt.reshape(-1))
        opt.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        print(f"step {step} loss {loss.item():.3f}")


if __name__ == "__main__":
    main()
