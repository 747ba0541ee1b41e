# -*- coding: utf-8 -*-
"""VQGAN 第一阶段训练（参考 taming-transformers 的结构，简化版）。

编码器 -> 向量量化（1024 个码字，直通估计）-> 解码器，加一个 PatchGAN 判别器。
生成器和判别器各用一个 Adam 优化器，交替更新；GAN 损失的权重用最后一层的梯度范数自适应计算。
"""
import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


def Normalize(c):
    return nn.GroupNorm(num_groups=32, num_channels=c, eps=1e-6, affine=True)


class ResnetBlock(nn.Module):
    def __init__(self, cin, cout=None, dropout=0.0):
        super().__init__()
        cout = cout or cin
        self.norm1 = Normalize(cin)
        self.conv1 = nn.Conv2d(cin, cout, 3, padding=1)
        self.norm2 = Normalize(cout)
        self.dropout = nn.Dropout(dropout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1)
        self.nin_shortcut = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x):
        h = self.conv1(F.silu(self.norm1(x)))
        h = self.conv2(self.dropout(F.silu(self.norm2(h))))
        return self.nin_shortcut(x) + h


class AttnBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.norm = Normalize(c)
        self.qkv = nn.Conv2d(c, 3 * c, 1)
        self.proj_out = nn.Conv2d(c, c, 1)

    def forward(self, x):
        b, c, h, w = x.shape
        q, k, v = self.qkv(self.norm(x)).reshape(b, 3, c, h * w).unbind(1)
        attn = torch.softmax(torch.einsum("bci,bcj->bij", q, k) * c ** -0.5, dim=-1)
        out = torch.einsum("bij,bcj->bci", attn, v).reshape(b, c, h, w)
        return x + self.proj_out(out)


class Encoder(nn.Module):
    def __init__(self, ch, ch_mult, num_res_blocks, z_channels, attn_res, resolution):
        super().__init__()
        self.conv_in = nn.Conv2d(3, ch, 3, padding=1)
        blocks = []
        cin, res = ch, resolution
        for i, mult in enumerate(ch_mult):
            cout = ch * mult
            for _ in range(num_res_blocks):
                blocks.append(ResnetBlock(cin, cout))
                cin = cout
                if res in attn_res:
                    blocks.append(AttnBlock(cin))
            if i != len(ch_mult) - 1:
                blocks.append(nn.Conv2d(cin, cin, 3, stride=2, padding=1))   # 下采样
                res //= 2
        self.down = nn.Sequential(*blocks)
        self.mid = nn.Sequential(ResnetBlock(cin), AttnBlock(cin), ResnetBlock(cin))
        self.norm_out = Normalize(cin)
        self.conv_out = nn.Conv2d(cin, z_channels, 3, padding=1)

    def forward(self, x):
        h = self.mid(self.down(self.conv_in(x)))
        return self.conv_out(F.silu(self.norm_out(h)))


class Upsample(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)

    def forward(self, x):
        return self.conv(F.interpolate(x, scale_factor=2.0, mode="nearest"))


class Decoder(nn.Module):
    def __init__(self, ch, ch_mult, num_res_blocks, z_channels, attn_res, resolution):
        super().__init__()
        cin = ch * ch_mult[-1]
        res = resolution // 2 ** (len(ch_mult) - 1)
        self.conv_in = nn.Conv2d(z_channels, cin, 3, padding=1)
        self.mid = nn.Sequential(ResnetBlock(cin), AttnBlock(cin), ResnetBlock(cin))
        blocks = []
        for i, mult in reversed(list(enumerate(ch_mult))):
            cout = ch * mult
            for _ in range(num_res_blocks + 1):        # 解码器每层多一个残差块
                blocks.append(ResnetBlock(cin, cout))
                cin = cout
                if res in attn_res:
                    blocks.append(AttnBlock(cin))
            if i != 0:
                blocks.append(Upsample(cin))
                res *= 2
        self.up = nn.Sequential(*blocks)
        self.norm_out = Normalize(cin)
        self.conv_out = nn.Conv2d(cin, 3, 3, padding=1)

    def forward(self, z):
        h = self.up(self.mid(self.conv_in(z)))
        return self.conv_out(F.silu(self.norm_out(h)))


class VectorQuantizer(nn.Module):
    def __init__(self, n_e, e_dim, beta=0.25):
        super().__init__()
        self.beta = beta
        self.embedding = nn.Embedding(n_e, e_dim)
        self.embedding.weight.data.uniform_(-1.0 / n_e, 1.0 / n_e)

    def forward(self, z):
        z = z.permute(0, 2, 3, 1).contiguous()
        z_flat = z.view(-1, z.shape[-1])
        d = (z_flat.pow(2).sum(1, keepdim=True) + self.embedding.weight.pow(2).sum(1)
             - 2 * z_flat @ self.embedding.weight.t())
        idx = d.argmin(dim=1)
        z_q = self.embedding(idx).view(z.shape)
        loss = self.beta * F.mse_loss(z_q.detach(), z) + F.mse_loss(z_q, z.detach())
        z_q = z + (z_q - z).detach()          # 直通估计
        return z_q.permute(0, 3, 1, 2).contiguous(), loss, idx


class VQModel(nn.Module):
    def __init__(self, ch=128, ch_mult=(1, 1, 2, 2, 4), num_res_blocks=1, z_channels=256, embed_dim=256,
                 n_embed=1024, attn_res=(16,), resolution=256):
        super().__init__()
        self.encoder = Encoder(ch, ch_mult, num_res_blocks, z_channels, attn_res, resolution)
        self.decoder = Decoder(ch, ch_mult, num_res_blocks, z_channels, attn_res, resolution)
        self.quantize = VectorQuantizer(n_embed, embed_dim)
        self.quant_conv = nn.Conv2d(z_channels, embed_dim, 1)
        self.post_quant_conv = nn.Conv2d(embed_dim, z_channels, 1)

    def forward(self, x):
        quant, qloss, _ = self.quantize(self.quant_conv(self.encoder(x)))
        return self.decoder(self.post_quant_conv(quant)), qloss

    def get_last_layer(self):
        return self.decoder.conv_out.weight


class NLayerDiscriminator(nn.Module):
    """PatchGAN 判别器（pix2pix）。"""

    def __init__(self, input_nc=3, ndf=64, n_layers=3):
        super().__init__()
        seq = [nn.Conv2d(input_nc, ndf, 4, 2, 1), nn.LeakyReLU(0.2, True)]
        mult = 1
        for n in range(1, n_layers + 1):
            prev, mult = mult, min(2 ** n, 8)
            stride = 2 if n < n_layers else 1
            seq += [nn.Conv2d(ndf * prev, ndf * mult, 4, stride, 1, bias=False), nn.BatchNorm2d(ndf * mult),
                    nn.LeakyReLU(0.2, True)]
        seq += [nn.Conv2d(ndf * mult, 1, 4, 1, 1)]
        self.main = nn.Sequential(*seq)

    def forward(self, x):
        return self.main(x)


def hinge_d_loss(logits_real, logits_fake):
    return 0.5 * (F.relu(1.0 - logits_real).mean() + F.relu(1.0 + logits_fake).mean())


def calculate_adaptive_weight(nll_loss, g_loss, last_layer, disc_weight=0.8):
    nll_grads = torch.autograd.grad(nll_loss, last_layer, retain_graph=True)[0]
    g_grads = torch.autograd.grad(g_loss, last_layer, retain_graph=True)[0]
    d_weight = torch.norm(nll_grads) / (torch.norm(g_grads) + 1e-4)
    return torch.clamp(d_weight, 0.0, 1e4).detach() * disc_weight


class ImageFolderStub(Dataset):
    def __init__(self, n, res):
        self.n, self.res = n, res

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.rand(3, self.res, self.res) * 2 - 1     # 图像归一化到 [-1, 1]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--resolution", type=int, default=256)
    parser.add_argument("--batch_size", type=int, default=8)
    parser.add_argument("--base_lr", type=float, default=4.5e-6)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--disc_start", type=int, default=1)      # 从第几步开始加 GAN 损失
    args = parser.parse_args()

    device = torch.device("cuda")
    model = VQModel(resolution=args.resolution).to(device)
    disc = NLayerDiscriminator().to(device)
    lr = args.base_lr * args.batch_size             # 和原仓库一样按 batch 放大学习率
    opt_ae = torch.optim.Adam(list(model.encoder.parameters()) + list(model.decoder.parameters())
                              + list(model.quantize.parameters()) + list(model.quant_conv.parameters())
                              + list(model.post_quant_conv.parameters()), lr=lr, betas=(0.5, 0.9))
    opt_disc = torch.optim.Adam(disc.parameters(), lr=lr, betas=(0.5, 0.9))
    print(f"生成器参数 {sum(p.numel() for p in model.parameters()) / 1e6:.1f}M, "
          f"判别器参数 {sum(p.numel() for p in disc.parameters()) / 1e6:.2f}M")

    loader = DataLoader(ImageFolderStub(args.batch_size * args.steps, args.resolution),
                        batch_size=args.batch_size, shuffle=True, num_workers=2, drop_last=True)

    global_step = 0
    t0 = time.time()
    for x in loader:
        x = x.to(device)
        disc_factor = 1.0 if global_step >= args.disc_start else 0.0

        # ---- 生成器（自编码器）更新 ----
        xrec, qloss = model(x)
        rec_loss = (x - xrec).abs().mean()
        logits_fake = disc(xrec)
        g_loss = -logits_fake.mean()
        d_weight = calculate_adaptive_weight(rec_loss, g_loss, model.get_last_layer())
        ae_loss = rec_loss + d_weight * disc_factor * g_loss + qloss.mean()
        opt_ae.zero_grad()
        ae_loss.backward()
        opt_ae.step()

        # ---- 判别器更新 ----
        logits_real = disc(x.detach())
        logits_fake = disc(xrec.detach())
        d_loss = disc_factor * hinge_d_loss(logits_real, logits_fake)
        opt_disc.zero_grad()
        d_loss.backward()
        opt_disc.step()

        global_step += 1
        print(f"step {global_step}: rec {rec_loss.item():.4f} q {qloss.item():.4f} g {g_loss.item():.4f} "
              f"d {d_loss.item():.4f} ({time.time() - t0:.1f}s)")

    print(f"显存峰值 {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
