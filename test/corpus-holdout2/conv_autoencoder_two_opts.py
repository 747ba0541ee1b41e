"""Convolutional autoencoder on Fashion-MNIST with separate optimisers (and learning rates)
for the encoder and the decoder."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision import datasets, transforms

LATENT = 32
EPOCHS = 30
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class AutoEncoder(nn.Module):
    def __init__(self, latent=LATENT):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv2d(1, 32, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(32, 64, 3, stride=2, padding=1), nn.ReLU(),
            nn.Flatten(), nn.Linear(64 * 7 * 7, latent),
        )
        self.decoder = nn.Sequential(
            nn.Linear(latent, 64 * 7 * 7), nn.ReLU(), nn.Unflatten(1, (64, 7, 7)),
            nn.ConvTranspose2d(64, 32, 3, stride=2, padding=1, output_padding=1), nn.ReLU(),
            nn.ConvTranspose2d(32, 1, 3, stride=2, padding=1, output_padding=1), nn.Sigmoid(),
        )

    def forward(self, x):
        return self.decoder(self.encoder(x))


train_loader = DataLoader(datasets.FashionMNIST("data", train=True, download=True, transform=transforms.ToTensor()),
                          batch_size=256, shuffle=True, num_workers=2)

model = AutoEncoder().to(device)
opt_enc = torch.optim.Adam(model.encoder.parameters(), lr=1e-3)
opt_dec = torch.optim.Adam(model.decoder.parameters(), lr=5e-4)

for epoch in range(EPOCHS):
    total = 0.0
    for x, _ in train_loader:
        x = x.to(device)
        recon = model(x)
        loss = F.binary_cross_entropy(recon, x)
        opt_enc.zero_grad()
        opt_dec.zero_grad()
        loss.backward()
        opt_enc.step()
        opt_dec.step()
        total += loss.item() * x.size(0)
    print(f"epoch {epoch}: recon loss {total / len(train_loader.dataset):.4f}")

torch.save(model.state_dict(), "conv_ae.pt")
