"""Conditional GAN on Fashion-MNIST. 🎨

The generator output is NOT detached for the D step, so the D backward keeps the
graph (retain_graph=True) and the G backward goes through the same graph again.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision import datasets, transforms
from torchvision.utils import save_image

LATENT = 64
N_CLASSES = 10
EPOCHS = 50
device = "cuda" if torch.cuda.is_available() else "cpu"


class G(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(N_CLASSES, N_CLASSES)
        self.net = nn.Sequential(
            nn.Linear(LATENT + N_CLASSES, 256), nn.LeakyReLU(0.2),
            nn.Linear(256, 512), nn.BatchNorm1d(512), nn.LeakyReLU(0.2),
            nn.Linear(512, 784), nn.Tanh(),
        )

    def forward(self, z, y):
        return self.net(torch.cat([z, self.emb(y)], 1)).view(-1, 1, 28, 28)


class D(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(N_CLASSES, N_CLASSES)
        self.net = nn.Sequential(
            nn.Linear(784 + N_CLASSES, 512), nn.LeakyReLU(0.2),
            nn.Dropout(0.3),
            nn.Linear(512, 256), nn.LeakyReLU(0.2),
            nn.Linear(256, 1),
        )

    def forward(self, x, y):
        return self.net(torch.cat([x.view(x.size(0), -1), self.emb(y)], 1))


loader = DataLoader(
    datasets.FashionMNIST("data", train=True, download=True,
                          transform=transforms.Compose([transforms.ToTensor(), transforms.Normalize([0.5], [0.5])])),
    batch_size=128, shuffle=True, drop_last=True)

gen, disc = G().to(device), D().to(device)
opt_g = torch.optim.Adam(gen.parameters(), lr=2e-4, betas=(0.5, 0.999))
opt_d = torch.optim.Adam(disc.parameters(), lr=2e-4, betas=(0.5, 0.999))

g_hist, d_hist = [], []
real_scores = []
fixed_z = torch.randn(100, LATENT, device=device)
fixed_y = torch.arange(N_CLASSES, device=device).repeat_interleave(10)

for epoch in range(EPOCHS):
    for i, (real, labels) in enumerate(loader):
        real, labels = real.to(device), labels.to(device)
        bs = real.size(0)
        ones = torch.ones(bs, 1, device=device)
        zeros = torch.zeros(bs, 1, device=device)

        z = torch.randn(bs, LATENT, device=device)
        fake = gen(z, labels)

        # --- discriminator ---
        opt_d.zero_grad()
        d_real = disc(real, labels)
        d_fake = disc(fake, labels)
        d_loss = F.binary_cross_entropy_with_logits(d_real, ones) + \
            F.binary_cross_entropy_with_logits(d_fake, zeros)
        d_loss.backward(retain_graph=True)
        opt_d.step()

        # --- generator (reuses the graph of `fake`) ---
        opt_g.zero_grad()
        g_loss = F.binary_cross_entropy_with_logits(disc(fake, labels), ones)
        g_loss.backward()
        opt_g.step()

        d_hist.append(d_loss.item())
        g_hist.append(g_loss)  # expect: OOM101
        real_scores.append((torch.sigmoid(d_real) > 0.5).long())  # 👀 hard decisions only

    with torch.no_grad():
        gen.eval()
        samples = gen(fixed_z, fixed_y)
        gen.train()
    save_image(samples * 0.5 + 0.5, f"cgan_epoch{epoch:03d}.png", nrow=10)
    print(f"epoch {epoch}: D {sum(d_hist[-len(loader):]) / len(loader):.3f}")
