"""Convolutional VAE on 256x256 face crops; encoder/decoder built with list comprehensions."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

IMG = 256
DEPTH = 6
LATENT = 256
BATCH = 192
EPOCHS = 1
TRAIN_BATCHES = 5
VAL_BATCHES = 2
KL_WEIGHT = 1e-3


def conv_block(c_in, c_out):
    return nn.Sequential(nn.Conv2d(c_in, c_out, 3, stride=2, padding=1), nn.BatchNorm2d(c_out), nn.LeakyReLU(0.2))


def deconv_block(c_in, c_out):
    return nn.Sequential(nn.ConvTranspose2d(c_in, c_out, 4, stride=2, padding=1), nn.BatchNorm2d(c_out),
                         nn.LeakyReLU(0.2))


class ConvVAE(nn.Module):
    def __init__(self, img_size=256, depth=6, latent_dim=256, base=32, max_ch=512):
        super().__init__()
        chs = [min(base * 2 ** i, max_ch) for i in range(depth)]
        in_chs = [3] + chs[:-1]
        self.encoder = nn.Sequential(*[conv_block(in_chs[i], chs[i]) for i in range(depth)])
        self.bottom = img_size // 2 ** depth
        self.top_ch = chs[-1]
        flat = chs[-1] * self.bottom * self.bottom
        self.fc_mu = nn.Linear(flat, latent_dim)
        self.fc_logvar = nn.Linear(flat, latent_dim)
        self.fc_dec = nn.Linear(latent_dim, flat)
        rev = chs[::-1]
        self.decoder = nn.Sequential(*[deconv_block(rev[i], rev[i + 1]) for i in range(depth - 1)])
        self.to_rgb = nn.ConvTranspose2d(rev[-1], 3, 4, stride=2, padding=1)

    def encode(self, x):
        h = self.encoder(x).flatten(1)
        return self.fc_mu(h), self.fc_logvar(h)

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        return mu + torch.randn_like(std) * std

    def decode(self, z):
        h = self.fc_dec(z).view(-1, self.top_ch, self.bottom, self.bottom)
        return torch.sigmoid(self.to_rgb(self.decoder(h)))

    def forward(self, x):
        mu, logvar = self.encode(x)
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar


def vae_loss(recon, x, mu, logvar):
    rec = F.mse_loss(recon, x, reduction="sum") / x.size(0)
    kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp()) / x.size(0)
    return rec + KL_WEIGHT * kld


class Faces(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.rand(3, IMG, IMG)


def main():
    device = "cuda"
    model = ConvVAE(IMG, DEPTH, LATENT).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    train_dl = DataLoader(Faces(BATCH * TRAIN_BATCHES), batch_size=BATCH, shuffle=True)
    val_dl = DataLoader(Faces(BATCH * VAL_BATCHES), batch_size=BATCH)

    for epoch in range(EPOCHS):
        model.train()
        for step, x in enumerate(train_dl):
            x = x.to(device)
            recon, mu, logvar = model(x)
            loss = vae_loss(recon, x, mu, logvar)
            opt.zero_grad()
            loss.backward()
            opt.step()
            print(f"epoch {epoch} step {step} loss {loss.item():.2f}")

        model.eval()
        val_loss, samples = 0.0, []
        with torch.no_grad():
            for x in val_dl:
                x = x.to(device)
                recon, mu, logvar = model(x)
                val_loss += vae_loss(recon, x, mu, logvar).item()
                samples.append(recon[:8].cpu())
        print(f"epoch {epoch} val loss {val_loss / len(val_dl):.2f}, kept {len(samples)} sample grids")


if __name__ == "__main__":
    main()
