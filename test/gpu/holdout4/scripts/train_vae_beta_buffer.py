# -*- coding: utf-8 -*-
"""卷积 β-VAE（128x128），KL 权重用 register_buffer 保存并线性预热。
用法: python train_vae_beta_buffer.py --bs 128 --img 128
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--bs", type=int, default=128, dest="batch_size", help="批大小")
    p.add_argument("--img", type=int, default=128, dest="image_size", help="输入分辨率")
    p.add_argument("--zdim", type=int, default=256, dest="latent_dim")
    p.add_argument("--base", type=int, default=128, dest="base_channels")
    p.add_argument("--lr", type=float, default=2e-4)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--beta-max", type=float, default=4.0)
    return p.parse_args()


class RandomFaces(Dataset):
    def __init__(self, n, size):
        self.n, self.size = n, size

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.rand(3, self.size, self.size)


def enc_block(c_in, c_out):
    return nn.Sequential(nn.Conv2d(c_in, c_out, 4, 2, 1), nn.BatchNorm2d(c_out), nn.LeakyReLU(0.2, inplace=True))


def dec_block(c_in, c_out):
    return nn.Sequential(nn.ConvTranspose2d(c_in, c_out, 4, 2, 1), nn.BatchNorm2d(c_out), nn.ReLU(inplace=True))


class BetaVAE(nn.Module):
    def __init__(self, image_size, latent_dim, base, beta_max, warmup_steps=1000):
        super().__init__()
        chans = [3, base, base * 2, base * 4, base * 8, base * 8]   # 128 -> 4 (5 次下采样)
        self.encoder = nn.Sequential(*[enc_block(a, b) for a, b in zip(chans[:-1], chans[1:])])
        self.feat = image_size // 2 ** (len(chans) - 1)
        flat = chans[-1] * self.feat * self.feat
        self.fc_mu = nn.Linear(flat, latent_dim)
        self.fc_logvar = nn.Linear(flat, latent_dim)
        self.fc_dec = nn.Linear(latent_dim, flat)
        rev = chans[::-1]
        self.decoder = nn.Sequential(*[dec_block(a, b) for a, b in zip(rev[:-2], rev[1:-1])],
                                     nn.ConvTranspose2d(rev[-2], 3, 4, 2, 1))
        self.top = chans[-1]
        # KL 权重与步数计数器：不参与训练，但随 state_dict 保存
        self.register_buffer("beta", torch.tensor(0.0))
        self.register_buffer("num_updates", torch.tensor(0, dtype=torch.long))
        self.beta_max = beta_max
        self.warmup_steps = warmup_steps

    def forward(self, x):
        h = self.encoder(x).flatten(1)
        mu, logvar = self.fc_mu(h), self.fc_logvar(h)
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)   # 重参数化
        h = self.fc_dec(z).view(x.size(0), self.top, self.feat, self.feat)
        return self.decoder(h), mu, logvar

    @torch.no_grad()
    def update_beta(self):
        self.num_updates += 1
        self.beta.fill_(min(1.0, self.num_updates.item() / self.warmup_steps) * self.beta_max)


def main():
    args = get_args()
    model = BetaVAE(args.image_size, args.latent_dim, args.base_channels, args.beta_max).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    loader = DataLoader(RandomFaces(args.batch_size * args.steps, args.image_size), batch_size=args.batch_size)
    model.train()
    for step, x in enumerate(loader):
        x = x.cuda(non_blocking=True)
        recon, mu, logvar = model(x)
        rec = F.binary_cross_entropy_with_logits(recon, x, reduction="sum") / x.size(0)
        kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp()) / x.size(0)
        loss = rec + model.beta * kl
        opt.zero_grad()
        loss.backward()
        opt.step()
        model.update_beta()
        print(f"第 {step} 步: loss={loss.item():.1f} rec={rec.item():.1f} kl={kl.item():.1f} beta={model.beta.item():.4f}")
    print("峰值显存: %.2f GiB" % (torch.cuda.max_memory_allocated() / 2**30))


if __name__ == "__main__":
    main()
