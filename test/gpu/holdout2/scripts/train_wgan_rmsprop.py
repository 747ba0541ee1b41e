# -*- coding: utf-8 -*-
# WGAN(权重裁剪版)训练脚本,按原论文的设置:RMSprop,lr=5e-5,每训练一次生成器就训练 5 次判别器(critic)。
# 数据集这里用随机张量代替,只为了跑通流程。
import argparse
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

parser = argparse.ArgumentParser()
parser.add_argument("--image_size", type=int, default=128, help="生成图像的边长")
parser.add_argument("--batch_size", type=int, default=256)
parser.add_argument("--nz", type=int, default=128, help="噪声向量维度")
parser.add_argument("--ngf", type=int, default=64)
parser.add_argument("--ndf", type=int, default=64)
parser.add_argument("--lr", type=float, default=5e-5)
parser.add_argument("--n_critic", type=int, default=5)
parser.add_argument("--clip_value", type=float, default=0.01)
parser.add_argument("--g_iters", type=int, default=3, help="生成器迭代次数")
opt = parser.parse_args()


class FaceCrops(Dataset):
    """假装是人脸数据集:返回 [-1, 1] 范围的图像。"""

    def __init__(self, n, size):
        self.n, self.size = n, size

    def __len__(self):
        return self.n

    def __getitem__(self, idx):
        return torch.rand(3, self.size, self.size) * 2 - 1


def up_block(c_in, c_out):
    # 反卷积上采样 2 倍 + BN + ReLU
    return [nn.ConvTranspose2d(c_in, c_out, 4, 2, 1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU(True)]


def down_block(c_in, c_out, bn=True):
    layers = [nn.Conv2d(c_in, c_out, 4, 2, 1, bias=False)]
    if bn:
        layers.append(nn.BatchNorm2d(c_out))
    layers.append(nn.LeakyReLU(0.2, inplace=True))
    return layers


class Generator(nn.Module):
    def __init__(self, nz, ngf, image_size):
        super().__init__()
        n_up = 0
        s = 4
        while s < image_size:      # 4 -> 8 -> ... -> image_size
            s *= 2
            n_up += 1
        mult = 2 ** (n_up - 1)
        layers = [nn.ConvTranspose2d(nz, ngf * mult, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * mult), nn.ReLU(True)]
        for _ in range(n_up - 1):
            layers += up_block(ngf * mult, ngf * mult // 2)
            mult //= 2
        layers += [nn.ConvTranspose2d(ngf, 3, 4, 2, 1, bias=False), nn.Tanh()]
        self.main = nn.Sequential(*layers)

    def forward(self, z):
        return self.main(z)


class Critic(nn.Module):
    def __init__(self, ndf, image_size):
        super().__init__()
        layers = down_block(3, ndf, bn=False)
        s, mult = image_size // 2, 1
        while s > 4:
            layers += down_block(ndf * mult, ndf * mult * 2)
            mult *= 2
            s //= 2
        layers.append(nn.Conv2d(ndf * mult, 1, 4, 1, 0, bias=False))   # 没有 sigmoid:输出的是 Wasserstein 距离估计
        self.main = nn.Sequential(*layers)

    def forward(self, x):
        return self.main(x).view(-1)


def weights_init(m):
    name = m.__class__.__name__
    if "Conv" in name:
        nn.init.normal_(m.weight, 0.0, 0.02)
    elif "BatchNorm" in name:
        nn.init.normal_(m.weight, 1.0, 0.02)
        nn.init.zeros_(m.bias)


device = torch.device("cuda")
netG = Generator(opt.nz, opt.ngf, opt.image_size).to(device)
netD = Critic(opt.ndf, opt.image_size).to(device)
netG.apply(weights_init)
netD.apply(weights_init)

optD = torch.optim.RMSprop(netD.parameters(), lr=opt.lr)
optG = torch.optim.RMSprop(netG.parameters(), lr=opt.lr)

# 判别器每次迭代都要取一个真实 batch
n_real = opt.batch_size * opt.n_critic * opt.g_iters
loader = DataLoader(FaceCrops(n_real, opt.image_size), batch_size=opt.batch_size, shuffle=True,
                    num_workers=4, drop_last=True)
data_iter = iter(loader)

t0 = time.time()
for g_it in range(opt.g_iters):
    # ---- (1) 训练 critic n_critic 次 ----
    for p in netD.parameters():
        p.requires_grad_(True)
    for _ in range(opt.n_critic):
        real = next(data_iter).to(device)
        # 权重裁剪
        for p in netD.parameters():
            p.data.clamp_(-opt.clip_value, opt.clip_value)
        optD.zero_grad()
        noise = torch.randn(opt.batch_size, opt.nz, 1, 1, device=device)
        with torch.no_grad():
            fake = netG(noise)        # 生成器不需要梯度
        lossD = netD(fake).mean() - netD(real).mean()
        lossD.backward()
        optD.step()

    # ---- (2) 训练生成器一次 ----
    for p in netD.parameters():
        p.requires_grad_(False)   # 冻结 critic,省显存
    optG.zero_grad()
    noise = torch.randn(opt.batch_size, opt.nz, 1, 1, device=device)
    lossG = -netD(netG(noise)).mean()
    lossG.backward()
    optG.step()
    print(f"[{g_it + 1}/{opt.g_iters}] Loss_D {lossD.item():.4f} Loss_G {lossG.item():.4f} "
          f"{time.time() - t0:.1f}s")
