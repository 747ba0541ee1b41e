# DCGAN at 128x128 (CelebA-HQ crops).  Generator / discriminator stacks are built in loops.
import math
import random

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

manualSeed = 999
random.seed(manualSeed)
torch.manual_seed(manualSeed)

batch_size = 256
image_size = 128
nc = 3       # channels
nz = 100     # latent size
ngf = 64
ndf = 64
num_epochs = 1
lr = 2e-4
beta1 = 0.5
num_batches = 5

device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")


def up_block(c_in, c_out):
    return [nn.ConvTranspose2d(c_in, c_out, 4, 2, 1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU(True)]


def down_block(c_in, c_out):
    return [nn.Conv2d(c_in, c_out, 4, 2, 1, bias=False), nn.BatchNorm2d(c_out), nn.LeakyReLU(0.2, inplace=True)]


class Generator(nn.Module):
    def __init__(self, nz, ngf, nc, img_size):
        super().__init__()
        n_up = int(math.log2(img_size)) - 3
        mult = 2 ** n_up
        layers = [nn.ConvTranspose2d(nz, ngf * mult, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * mult), nn.ReLU(True)]
        for _ in range(n_up):
            layers += up_block(ngf * mult, ngf * mult // 2)
            mult //= 2
        layers += [nn.ConvTranspose2d(ngf, nc, 4, 2, 1, bias=False), nn.Tanh()]
        self.main = nn.Sequential(*layers)

    def forward(self, z):
        return self.main(z)


class Discriminator(nn.Module):
    def __init__(self, nc, ndf, img_size):
        super().__init__()
        n_down = int(math.log2(img_size)) - 3
        layers = [nn.Conv2d(nc, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True)]
        mult = 1
        for _ in range(n_down):
            layers += down_block(ndf * mult, ndf * mult * 2)
            mult *= 2
        layers += [nn.Conv2d(ndf * mult, 1, 4, 1, 0, bias=False)]
        self.main = nn.Sequential(*layers)

    def forward(self, x):
        return self.main(x).view(-1)


def weights_init(m):
    classname = m.__class__.__name__
    if classname.find("Conv") != -1:
        nn.init.normal_(m.weight.data, 0.0, 0.02)
    elif classname.find("BatchNorm") != -1:
        nn.init.normal_(m.weight.data, 1.0, 0.02)
        nn.init.constant_(m.bias.data, 0)


netG = Generator(nz, ngf, nc, image_size).to(device)
netG.apply(weights_init)
netD = Discriminator(nc, ndf, image_size).to(device)
netD.apply(weights_init)

criterion = nn.BCEWithLogitsLoss()
fixed_noise = torch.randn(64, nz, 1, 1, device=device)
real_label, fake_label = 1.0, 0.0

optimizerD = torch.optim.Adam(netD.parameters(), lr=lr, betas=(beta1, 0.999))
optimizerG = torch.optim.Adam(netG.parameters(), lr=lr, betas=(beta1, 0.999))

# images scaled to [-1, 1] like transforms.Normalize((0.5,)*3, (0.5,)*3)
real_images = torch.rand(batch_size * num_batches, nc, image_size, image_size) * 2 - 1
dataloader = DataLoader(TensorDataset(real_images), batch_size=batch_size, shuffle=True)

G_losses, D_losses = [], []
print("Starting Training Loop...")
for epoch in range(num_epochs):
    for i, (real_cpu,) in enumerate(dataloader):
        # (1) Update D: maximize log(D(x)) + log(1 - D(G(z)))
        netD.zero_grad()
        real = real_cpu.to(device)
        b_size = real.size(0)
        label = torch.full((b_size,), real_label, dtype=torch.float, device=device)
        output = netD(real)
        errD_real = criterion(output, label)
        errD_real.backward()

        noise = torch.randn(b_size, nz, 1, 1, device=device)
        fake = netG(noise)
        label.fill_(fake_label)
        output = netD(fake.detach())
        errD_fake = criterion(output, label)
        errD_fake.backward()
        errD = errD_real + errD_fake
        optimizerD.step()

        # (2) Update G: maximize log(D(G(z)))
        netG.zero_grad()
        label.fill_(real_label)
        output = netD(fake)
        errG = criterion(output, label)
        errG.backward()
        optimizerG.step()

        G_losses.append(errG.item())
        D_losses.append(errD.item())
        print(f"[{epoch}/{num_epochs}][{i}/{len(dataloader)}] Loss_D: {errD.item():.4f} Loss_G: {errG.item():.4f}")

with torch.no_grad():
    samples = netG(fixed_noise).detach().cpu()
print("samples", tuple(samples.shape))
