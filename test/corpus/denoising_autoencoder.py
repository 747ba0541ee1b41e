"""Convolutional denoising auto-encoder for document scans (gaussian + salt&pepper noise)."""
import argparse
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision import datasets, transforms
from torchvision.utils import save_image


class DAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(
            nn.Conv2d(1, 32, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(32, 64, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(64, 128, 3, stride=2, padding=1), nn.ReLU(),
        )
        self.dec = nn.Sequential(
            nn.ConvTranspose2d(128, 64, 4, stride=2, padding=1), nn.ReLU(),
            nn.ConvTranspose2d(64, 32, 4, stride=2, padding=1), nn.ReLU(),
            nn.ConvTranspose2d(32, 1, 4, stride=2, padding=1), nn.Sigmoid(),
        )

    def forward(self, x):
        return self.dec(self.enc(x))


def add_noise(x, sigma=0.2, sp=0.05):
    noisy = x + sigma * torch.randn_like(x)
    mask = torch.rand_like(x)
    noisy[mask < sp / 2] = 0.0
    noisy[mask > 1 - sp / 2] = 1.0
    return noisy.clamp(0, 1)


def psnr(a, b):
    mse = F.mse_loss(a, b)
    return 10 * torch.log10(1.0 / mse)


def evaluate(model, loader, device, optimizer=None):
    model.eval()
    if optimizer is not None:
        optimizer.zero_grad(set_to_none=True)   # free grad memory before eval
    scores = []
    with torch.no_grad():
        for x, _ in loader:
            x = x.to(device)
            out = model(add_noise(x))
            scores.append(psnr(out, x).item())
    return sum(scores) / len(scores)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="data/scans")
    ap.add_argument("--epochs", type=int, default=50)
    ap.add_argument("--bs", type=int, default=64)
    args = ap.parse_args()

    tf = transforms.Compose([transforms.Grayscale(), transforms.Resize((256, 256)), transforms.ToTensor()])
    train_dl = DataLoader(datasets.ImageFolder(os.path.join(args.data, "train"), tf), batch_size=args.bs,
                          shuffle=True, num_workers=6)
    val_dl = DataLoader(datasets.ImageFolder(os.path.join(args.data, "val"), tf), batch_size=args.bs, num_workers=6)

    device = torch.device("cuda")
    model = DAE().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

    for epoch in range(args.epochs):
        model.train()
        running_loss = 0.0
        for i, (x, _) in enumerate(train_dl):
            x = x.to(device)
            recon = model(add_noise(x))
            loss = F.binary_cross_entropy(recon, x)
            loss.backward()
            optimizer.step()  # expect: OOM103
            running_loss += loss.cpu()  # expect: OOM102
            torch.cuda.empty_cache()  # expect: OOM106
        val_psnr = evaluate(model, val_dl, device, optimizer)
        print(f"epoch {epoch}: train bce {running_loss.item() / len(train_dl):.4f} val PSNR {val_psnr:.2f} dB")
        with torch.no_grad():
            x, _ = next(iter(val_dl))
            x = x[:8].to(device)
            noisy = add_noise(x)
            save_image(torch.cat([x, noisy, model(noisy)]), f"dae_epoch{epoch}.png", nrow=8)
    torch.save(model.state_dict(), "dae.pt")


if __name__ == "__main__":
    main()
