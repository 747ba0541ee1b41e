"""Siamese network with contrastive loss for signature verification.

fit() does training and the per-epoch validation pass in one function.
"""
import argparse
from collections import defaultdict

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader

from sigdata import SignaturePairs  # local dataset module


class Embedder(nn.Module):
    def __init__(self, dim=128):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 32, 5), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 5), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(64, 128, 3), nn.BatchNorm2d(128), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
        )
        self.fc = nn.Linear(128, dim)

    def forward(self, x):
        return F.normalize(self.fc(self.features(x).flatten(1)), dim=1)


def contrastive_loss(e1, e2, same, margin=1.0):
    d = (e1 - e2).pow(2).sum(1).sqrt()
    return (same * d.pow(2) + (1 - same) * F.relu(margin - d).pow(2)).mean()


def fit(model, train_dl, val_dl, epochs, lr, device):
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    history = defaultdict(list)
    for epoch in range(epochs):
        model.train()
        for a, b, same in train_dl:
            a, b, same = a.to(device), b.to(device), same.float().to(device)
            opt.zero_grad(set_to_none=True)
            loss = contrastive_loss(model(a), model(b), same)
            loss.backward()
            opt.step()
            history["train_loss"].append(loss)  # expect: OOM101

        model.eval()
        dists, labels = [], []
        for a, b, same in val_dl:
            ea = model(a.to(device))  # expect: OOM104
            eb = model(b.to(device))
            dists.append((ea - eb).norm(dim=1).detach().cpu())
            labels.append(same)
        dists, labels = torch.cat(dists), torch.cat(labels).bool()
        thr = dists[labels].mean().item() + dists[~labels].mean().item()
        acc = ((dists < thr / 2) == labels).float().mean().item()
        history["val_acc"].append(acc)
        print(f"epoch {epoch}: val acc {acc:.4f}")
    return history


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default="data/signatures")
    ap.add_argument("--epochs", type=int, default=20)
    args = ap.parse_args()
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_dl = DataLoader(SignaturePairs(args.root, "train"), batch_size=64, shuffle=True, num_workers=4)
    val_dl = DataLoader(SignaturePairs(args.root, "val"), batch_size=128, num_workers=4)
    net = Embedder().to(dev)
    hist = fit(net, train_dl, val_dl, args.epochs, 1e-3, dev)
    torch.save({"model": net.state_dict(), "val_acc": hist["val_acc"]}, "siamese.pt")
