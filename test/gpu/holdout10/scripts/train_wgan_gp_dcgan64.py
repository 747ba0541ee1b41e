"""WGAN-GP on 64x64 images (Gulrajani et al. 2017): DCGAN-style generator, critic without batch norm,
gradient penalty through torch.autograd.grad(create_graph=True), n_critic critic steps per generator step."""
import argparse

import torch
import torch.nn as nn
from torch import autograd
from torch.utils.data import DataLoader, Dataset

parser = argparse.ArgumentParser()
parser.add_argument("--n_epochs", type=int, default=1)
parser.add_argument("--batch_size", type=int, default=512)
parser.add_argument("--lr", type=float, default=1e-4)
parser.add_argument("--b1", type=float, default=0.0)
parser.add_argument("--b2", type=float, default=0.9)
parser.add_argument("--latent_dim", type=int, default=128)
parser.add_argument("--img_size", type=int, default=64)
parser.add_argument("--channels", type=int, default=3)
parser.add_argument("--ngf", type=int, default=128)
parser.add_argument("--ndf", type=int, default=128)
parser.add_argument("--n_critic", type=int, default=5)
parser.add_argument("--lambda_gp", type=float, default=10.0)
parser.add_argument("--max_batches", type=int, default=15)
opt = parser.parse_args()
print(opt)

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Generator(nn.Module):
    def __init__(self, nz, ngf, nc):
        super().__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 8, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * 8), nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 8, ngf * 4, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf * 4), nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf * 2), nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf), nn.ReLU(True),
            nn.ConvTranspose2d(ngf, nc, 4, 2, 1, bias=False), nn.Tanh(),
        )

    def forward(self, z):
        return self.main(z.view(z.size(0), -1, 1, 1))


class Critic(nn.Module):
    def __init__(self, ndf, nc, img_size):
        super().__init__()

        def block(cin, cout, size):
            # layer norm instead of batch norm: the penalty is per sample
            return [nn.Conv2d(cin, cout, 4, 2, 1), nn.LayerNorm([cout, size, size]), nn.LeakyReLU(0.2, inplace=True)]

        s = img_size
        self.main = nn.Sequential(
            nn.Conv2d(nc, ndf, 4, 2, 1), nn.LeakyReLU(0.2, inplace=True),
            *block(ndf, ndf * 2, s // 4),
            *block(ndf * 2, ndf * 4, s // 8),
            *block(ndf * 4, ndf * 8, s // 16),
            nn.Conv2d(ndf * 8, 1, 4, 1, 0),
        )

    def forward(self, x):
        return self.main(x).view(-1)


def compute_gradient_penalty(D, real, fake):
    alpha = torch.rand(real.size(0), 1, 1, 1, device=real.device)
    interpolates = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    d_interpolates = D(interpolates)
    gradients = autograd.grad(outputs=d_interpolates, inputs=interpolates,
                              grad_outputs=torch.ones_like(d_interpolates),
                              create_graph=True, retain_graph=True, only_inputs=True)[0]
    gradients = gradients.view(gradients.size(0), -1)
    return ((gradients.norm(2, dim=1) - 1) ** 2).mean()


class FaceCrops(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.rand(opt.channels, opt.img_size, opt.img_size) * 2 - 1


generator = Generator(opt.latent_dim, opt.ngf, opt.channels).to(device)
critic = Critic(opt.ndf, opt.channels, opt.img_size).to(device)
optimizer_G = torch.optim.Adam(generator.parameters(), lr=opt.lr, betas=(opt.b1, opt.b2))
optimizer_D = torch.optim.Adam(critic.parameters(), lr=opt.lr, betas=(opt.b1, opt.b2))
dataloader = DataLoader(FaceCrops(opt.batch_size * opt.max_batches), batch_size=opt.batch_size, shuffle=True,
                        num_workers=2, drop_last=True)

batches_done = 0
for epoch in range(opt.n_epochs):
    for i, real_imgs in enumerate(dataloader):
        real_imgs = real_imgs.to(device)

        # ---- critic ----
        optimizer_D.zero_grad()
        z = torch.randn(real_imgs.size(0), opt.latent_dim, device=device)
        fake_imgs = generator(z)
        real_validity = critic(real_imgs)
        fake_validity = critic(fake_imgs.detach())
        gradient_penalty = compute_gradient_penalty(critic, real_imgs.data, fake_imgs.data)
        d_loss = -torch.mean(real_validity) + torch.mean(fake_validity) + opt.lambda_gp * gradient_penalty
        d_loss.backward()
        optimizer_D.step()

        # ---- generator, every n_critic steps ----
        if i % opt.n_critic == 0:
            optimizer_G.zero_grad()
            fake_imgs = generator(z)
            g_loss = -torch.mean(critic(fake_imgs))
            g_loss.backward()
            optimizer_G.step()
            print(f"[Epoch {epoch}] [Batch {i}/{len(dataloader)}] [D loss: {d_loss.item():.4f}] "
                  f"[G loss: {g_loss.item():.4f}] [GP: {gradient_penalty.item():.4f}]")
            batches_done += opt.n_critic

print("max memory allocated (GiB):", torch.cuda.max_memory_allocated() / 2**30)
