"""HiFi-GAN (V1) vocoder training step, condensed from the official implementation: the generator and the
multi-period / multi-scale discriminators use weight-norm parametrizations (the first MSD scale uses
spectral norm), two AdamW optimizers, LSGAN + feature-matching + mel-L1 losses. Mel spectrograms are
computed on the GPU with torch.stft and a triangular filterbank built in the script."""
import json
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.parametrizations import spectral_norm, weight_norm

H = json.loads("""
{
  "resblock_kernel_sizes": [3, 7, 11],
  "resblock_dilation_sizes": [[1, 3, 5], [1, 3, 5], [1, 3, 5]],
  "upsample_rates": [8, 8, 2, 2],
  "upsample_kernel_sizes": [16, 16, 4, 4],
  "upsample_initial_channel": 512,
  "segment_size": 8192,
  "num_mels": 80,
  "n_fft": 1024,
  "hop_size": 256,
  "win_size": 1024,
  "sampling_rate": 22050,
  "fmin": 0,
  "fmax": 8000,
  "batch_size": 32,
  "learning_rate": 0.0002,
  "adam_b1": 0.8,
  "adam_b2": 0.99,
  "lr_decay": 0.999,
  "steps": 5
}
""")
LRELU_SLOPE = 0.1


def get_padding(k, d=1):
    return (k * d - d) // 2


class ResBlock1(nn.Module):
    def __init__(self, channels, kernel_size, dilation):
        super().__init__()
        self.convs1 = nn.ModuleList([weight_norm(nn.Conv1d(channels, channels, kernel_size, 1, dilation=d,
                                                           padding=get_padding(kernel_size, d))) for d in dilation])
        self.convs2 = nn.ModuleList([weight_norm(nn.Conv1d(channels, channels, kernel_size, 1, dilation=1,
                                                           padding=get_padding(kernel_size, 1))) for _ in dilation])

    def forward(self, x):
        for c1, c2 in zip(self.convs1, self.convs2):
            xt = c1(F.leaky_relu(x, LRELU_SLOPE))
            xt = c2(F.leaky_relu(xt, LRELU_SLOPE))
            x = xt + x
        return x


class Generator(nn.Module):
    def __init__(self, h):
        super().__init__()
        self.num_kernels = len(h["resblock_kernel_sizes"])
        self.conv_pre = weight_norm(nn.Conv1d(h["num_mels"], h["upsample_initial_channel"], 7, 1, padding=3))
        self.ups = nn.ModuleList()
        self.resblocks = nn.ModuleList()
        ch = h["upsample_initial_channel"]
        for i, (u, k) in enumerate(zip(h["upsample_rates"], h["upsample_kernel_sizes"])):
            self.ups.append(weight_norm(nn.ConvTranspose1d(ch // 2 ** i, ch // 2 ** (i + 1), k, u,
                                                           padding=(k - u) // 2)))
            for rk, rd in zip(h["resblock_kernel_sizes"], h["resblock_dilation_sizes"]):
                self.resblocks.append(ResBlock1(ch // 2 ** (i + 1), rk, rd))
        self.conv_post = weight_norm(nn.Conv1d(ch // 2 ** len(self.ups), 1, 7, 1, padding=3))

    def forward(self, x):
        x = self.conv_pre(x)
        for i, up in enumerate(self.ups):
            x = up(F.leaky_relu(x, LRELU_SLOPE))
            xs = sum(self.resblocks[i * self.num_kernels + j](x) for j in range(self.num_kernels))
            x = xs / self.num_kernels
        return torch.tanh(self.conv_post(F.leaky_relu(x)))


class DiscriminatorP(nn.Module):
    def __init__(self, period, kernel_size=5, stride=3):
        super().__init__()
        self.period = period
        chans = [1, 32, 128, 512, 1024]
        self.convs = nn.ModuleList([weight_norm(nn.Conv2d(chans[i], chans[i + 1], (kernel_size, 1), (stride, 1),
                                                          padding=(get_padding(5, 1), 0))) for i in range(4)])
        self.convs.append(weight_norm(nn.Conv2d(1024, 1024, (kernel_size, 1), 1, padding=(2, 0))))
        self.conv_post = weight_norm(nn.Conv2d(1024, 1, (3, 1), 1, padding=(1, 0)))

    def forward(self, x):
        fmap = []
        b, c, t = x.shape
        if t % self.period != 0:
            n_pad = self.period - (t % self.period)
            x = F.pad(x, (0, n_pad), "reflect")
            t = t + n_pad
        x = x.view(b, c, t // self.period, self.period)
        for layer in self.convs:
            x = F.leaky_relu(layer(x), LRELU_SLOPE)
            fmap.append(x)
        x = self.conv_post(x)
        fmap.append(x)
        return torch.flatten(x, 1, -1), fmap


class DiscriminatorS(nn.Module):
    def __init__(self, use_spectral_norm=False):
        super().__init__()
        norm_f = spectral_norm if use_spectral_norm else weight_norm
        self.convs = nn.ModuleList([
            norm_f(nn.Conv1d(1, 128, 15, 1, padding=7)),
            norm_f(nn.Conv1d(128, 128, 41, 2, groups=4, padding=20)),
            norm_f(nn.Conv1d(128, 256, 41, 2, groups=16, padding=20)),
            norm_f(nn.Conv1d(256, 512, 41, 4, groups=16, padding=20)),
            norm_f(nn.Conv1d(512, 1024, 41, 4, groups=16, padding=20)),
            norm_f(nn.Conv1d(1024, 1024, 41, 1, groups=16, padding=20)),
            norm_f(nn.Conv1d(1024, 1024, 5, 1, padding=2)),
        ])
        self.conv_post = norm_f(nn.Conv1d(1024, 1, 3, 1, padding=1))

    def forward(self, x):
        fmap = []
        for layer in self.convs:
            x = F.leaky_relu(layer(x), LRELU_SLOPE)
            fmap.append(x)
        x = self.conv_post(x)
        fmap.append(x)
        return torch.flatten(x, 1, -1), fmap


class MultiPeriodDiscriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.discriminators = nn.ModuleList([DiscriminatorP(p) for p in (2, 3, 5, 7, 11)])

    def forward(self, y, y_hat):
        outs = [(d(y), d(y_hat)) for d in self.discriminators]
        return ([r[0] for r, _ in outs], [g[0] for _, g in outs], [r[1] for r, _ in outs], [g[1] for _, g in outs])


class MultiScaleDiscriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.discriminators = nn.ModuleList([DiscriminatorS(use_spectral_norm=True), DiscriminatorS(), DiscriminatorS()])
        self.meanpools = nn.ModuleList([nn.AvgPool1d(4, 2, padding=2), nn.AvgPool1d(4, 2, padding=2)])

    def forward(self, y, y_hat):
        y_d_rs, y_d_gs, fmap_rs, fmap_gs = [], [], [], []
        for i, d in enumerate(self.discriminators):
            if i != 0:
                y, y_hat = self.meanpools[i - 1](y), self.meanpools[i - 1](y_hat)
            (r, fr), (g, fg) = d(y), d(y_hat)
            y_d_rs.append(r); fmap_rs.append(fr); y_d_gs.append(g); fmap_gs.append(fg)
        return y_d_rs, y_d_gs, fmap_rs, fmap_gs


def mel_filterbank(sr, n_fft, n_mels, fmin, fmax):
    def hz_to_mel(f):
        return 2595.0 * math.log10(1.0 + f / 700.0)
    mels = torch.linspace(hz_to_mel(fmin), hz_to_mel(fmax), n_mels + 2)
    hz = 700.0 * (10 ** (mels / 2595.0) - 1.0)
    bins = torch.linspace(0, sr / 2, n_fft // 2 + 1)
    lower, center, upper = hz[:-2, None], hz[1:-1, None], hz[2:, None]
    up = (bins[None] - lower) / (center - lower)
    down = (upper - bins[None]) / (upper - center)
    return torch.clamp(torch.minimum(up, down), min=0.0)          # (n_mels, n_fft//2+1)


def mel_spectrogram(y, fb, window, h):
    pad = (h["n_fft"] - h["hop_size"]) // 2
    y = F.pad(y.unsqueeze(1), (pad, pad), mode="reflect").squeeze(1)
    spec = torch.stft(y, h["n_fft"], hop_length=h["hop_size"], win_length=h["win_size"], window=window,
                      center=False, return_complex=True)
    spec = torch.sqrt(spec.real.pow(2) + spec.imag.pow(2) + 1e-9)
    return torch.log(torch.clamp(fb @ spec, min=1e-5))


def feature_loss(fmap_r, fmap_g):
    return 2 * sum(torch.mean(torch.abs(rl - gl)) for dr, dg in zip(fmap_r, fmap_g) for rl, gl in zip(dr, dg))


def discriminator_loss(real_outs, fake_outs):
    return sum(torch.mean((1 - dr) ** 2) + torch.mean(dg ** 2) for dr, dg in zip(real_outs, fake_outs))


def generator_loss(fake_outs):
    return sum(torch.mean((1 - dg) ** 2) for dg in fake_outs)


def main():
    device = torch.device("cuda")
    generator = Generator(H).to(device)
    mpd = MultiPeriodDiscriminator().to(device)
    msd = MultiScaleDiscriminator().to(device)
    optim_g = torch.optim.AdamW(generator.parameters(), H["learning_rate"], betas=[H["adam_b1"], H["adam_b2"]])
    optim_d = torch.optim.AdamW(list(msd.parameters()) + list(mpd.parameters()), H["learning_rate"],
                                betas=[H["adam_b1"], H["adam_b2"]])
    sched_g = torch.optim.lr_scheduler.ExponentialLR(optim_g, gamma=H["lr_decay"])
    sched_d = torch.optim.lr_scheduler.ExponentialLR(optim_d, gamma=H["lr_decay"])
    fb = mel_filterbank(H["sampling_rate"], H["n_fft"], H["num_mels"], H["fmin"], H["fmax"]).to(device)
    window = torch.hann_window(H["win_size"], device=device)

    generator.train(); mpd.train(); msd.train()
    for step in range(H["steps"]):
        y = torch.randn(H["batch_size"], H["segment_size"], device=device).clamp(-1, 1) * 0.3
        x = mel_spectrogram(y, fb, window, H)                       # (B, 80, 32)
        y = y.unsqueeze(1)
        y_g_hat = generator(x)
        y_g_hat_mel = mel_spectrogram(y_g_hat.squeeze(1), fb, window, H)

        # discriminators
        optim_d.zero_grad()
        y_df_r, y_df_g, _, _ = mpd(y, y_g_hat.detach())
        y_ds_r, y_ds_g, _, _ = msd(y, y_g_hat.detach())
        loss_disc_all = discriminator_loss(y_df_r, y_df_g) + discriminator_loss(y_ds_r, y_ds_g)
        loss_disc_all.backward()
        optim_d.step()

        # generator
        optim_g.zero_grad()
        loss_mel = F.l1_loss(x, y_g_hat_mel) * 45
        y_df_r, y_df_g, fmap_f_r, fmap_f_g = mpd(y, y_g_hat)
        y_ds_r, y_ds_g, fmap_s_r, fmap_s_g = msd(y, y_g_hat)
        loss_gen_all = (generator_loss(y_ds_g) + generator_loss(y_df_g) + feature_loss(fmap_s_r, fmap_s_g)
                        + feature_loss(fmap_f_r, fmap_f_g) + loss_mel)
        loss_gen_all.backward()
        optim_g.step()
        sched_g.step(); sched_d.step()
        print(f"step {step}: gen {loss_gen_all.item():.3f} disc {loss_disc_all.item():.3f} mel {loss_mel.item():.3f}")
    print("peak GiB", torch.cuda.max_memory_allocated() / 2**30)


if __name__ == "__main__":
    main()
