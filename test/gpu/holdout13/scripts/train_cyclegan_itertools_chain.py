"""CycleGAN (horse <-> zebra style) with ResNet-9 generators and 70x70 PatchGAN discriminators.

Both generators share one Adam through itertools.chain, both discriminators another; LSGAN losses, cycle and
identity losses, and the 50-image history pool for the discriminator inputs.
"""
import itertools
import random
from dataclasses import dataclass, field
from typing import Tuple

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


@dataclass
class Options:
    img_size: int = 256
    batch_size: int = 4
    ngf: int = 64
    ndf: int = 64
    n_blocks: int = 9
    lr: float = 2e-4
    betas: Tuple[float, float] = (0.5, 0.999)
    lambda_cycle: float = 10.0
    lambda_idt: float = 0.5
    pool_size: int = 50
    n_iters: int = 6
    seeds: list = field(default_factory=lambda: [0, 1])


class ResnetBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.block = nn.Sequential(
            nn.ReflectionPad2d(1), nn.Conv2d(dim, dim, 3), nn.InstanceNorm2d(dim), nn.ReLU(True),
            nn.ReflectionPad2d(1), nn.Conv2d(dim, dim, 3), nn.InstanceNorm2d(dim))

    def forward(self, x):
        return x + self.block(x)


def resnet_generator(ngf, n_blocks):
    layers = [nn.ReflectionPad2d(3), nn.Conv2d(3, ngf, 7), nn.InstanceNorm2d(ngf), nn.ReLU(True)]
    mult = 1
    for _ in range(2):
        layers += [nn.Conv2d(ngf * mult, ngf * mult * 2, 3, stride=2, padding=1), nn.InstanceNorm2d(ngf * mult * 2),
                   nn.ReLU(True)]
        mult *= 2
    layers += [ResnetBlock(ngf * mult) for _ in range(n_blocks)]
    for _ in range(2):
        layers += [nn.ConvTranspose2d(ngf * mult, ngf * mult // 2, 3, stride=2, padding=1, output_padding=1),
                   nn.InstanceNorm2d(ngf * mult // 2), nn.ReLU(True)]
        mult //= 2
    layers += [nn.ReflectionPad2d(3), nn.Conv2d(ngf, 3, 7), nn.Tanh()]
    return nn.Sequential(*layers)


def patch_discriminator(ndf, n_layers=3):
    layers = [nn.Conv2d(3, ndf, 4, stride=2, padding=1), nn.LeakyReLU(0.2, True)]
    mult = 1
    for n in range(1, n_layers + 1):
        prev, mult = mult, min(2 ** n, 8)
        stride = 2 if n < n_layers else 1
        layers += [nn.Conv2d(ndf * prev, ndf * mult, 4, stride=stride, padding=1), nn.InstanceNorm2d(ndf * mult),
                   nn.LeakyReLU(0.2, True)]
    layers += [nn.Conv2d(ndf * mult, 1, 4, stride=1, padding=1)]
    return nn.Sequential(*layers)


class ImagePool:
    def __init__(self, size):
        self.size, self.images = size, []

    def query(self, images):
        out = []
        for img in images.detach():
            img = img.unsqueeze(0)
            if len(self.images) < self.size:
                self.images.append(img)
                out.append(img)
            elif random.random() > 0.5:
                i = random.randrange(self.size)
                out.append(self.images[i].clone())
                self.images[i] = img
            else:
                out.append(img)
        return torch.cat(out, 0)


class Unpaired(Dataset):
    def __init__(self, n, size):
        self.n, self.size = n, size

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.rand(3, self.size, self.size) * 2 - 1, torch.rand(3, self.size, self.size) * 2 - 1


def main(opt=Options()):
    dev = "cuda"
    G_AB, G_BA = resnet_generator(opt.ngf, opt.n_blocks).to(dev), resnet_generator(opt.ngf, opt.n_blocks).to(dev)
    D_A, D_B = patch_discriminator(opt.ndf).to(dev), patch_discriminator(opt.ndf).to(dev)
    opt_G = torch.optim.Adam(itertools.chain(G_AB.parameters(), G_BA.parameters()), lr=opt.lr, betas=opt.betas)
    opt_D = torch.optim.Adam(itertools.chain(D_A.parameters(), D_B.parameters()), lr=opt.lr, betas=opt.betas)
    mse, l1 = nn.MSELoss(), nn.L1Loss()
    pool_A, pool_B = ImagePool(opt.pool_size), ImagePool(opt.pool_size)
    loader = DataLoader(Unpaired(opt.batch_size * opt.n_iters, opt.img_size), batch_size=opt.batch_size,
                        shuffle=True, num_workers=4)

    for it, (real_A, real_B) in enumerate(loader):
        real_A, real_B = real_A.to(dev), real_B.to(dev)
        # generators
        for p in itertools.chain(D_A.parameters(), D_B.parameters()):
            p.requires_grad_(False)
        fake_B = G_AB(real_A)
        rec_A = G_BA(fake_B)
        fake_A = G_BA(real_B)
        rec_B = G_AB(fake_A)
        idt_A = G_AB(real_B)
        idt_B = G_BA(real_A)
        pred_fb, pred_fa = D_B(fake_B), D_A(fake_A)
        loss_G = (mse(pred_fb, torch.ones_like(pred_fb)) + mse(pred_fa, torch.ones_like(pred_fa))
                  + opt.lambda_cycle * (l1(rec_A, real_A) + l1(rec_B, real_B))
                  + opt.lambda_cycle * opt.lambda_idt * (l1(idt_A, real_B) + l1(idt_B, real_A)))
        opt_G.zero_grad()
        loss_G.backward()
        opt_G.step()
        # discriminators
        for p in itertools.chain(D_A.parameters(), D_B.parameters()):
            p.requires_grad_(True)
        loss_D = 0.0
        for D, real, fake in ((D_A, real_A, pool_A.query(fake_A)), (D_B, real_B, pool_B.query(fake_B))):
            pr, pf = D(real), D(fake.detach())
            loss_D = loss_D + 0.5 * (mse(pr, torch.ones_like(pr)) + mse(pf, torch.zeros_like(pf)))
        opt_D.zero_grad()
        loss_D.backward()
        opt_D.step()
        print(f"iter {it} G {loss_G.item():.3f} D {loss_D.item():.3f}")
    print("peak GiB", torch.cuda.max_memory_allocated() / 2**30)


if __name__ == "__main__":
    main()
