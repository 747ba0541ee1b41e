"""BYOL (Grill et al. 2020) on STL-10 unlabeled, single GPU.

The target network is an exponential moving average of the online network.
"""
import argparse
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
import torchvision.transforms as T
from torch.utils.data import DataLoader


def mlp(in_dim, hidden=4096, out=256):
    return nn.Sequential(nn.Linear(in_dim, hidden), nn.BatchNorm1d(hidden), nn.ReLU(inplace=True), nn.Linear(hidden, out))


def byol_loss(p, z):
    p = F.normalize(p, dim=-1)
    z = F.normalize(z, dim=-1)
    return 2 - 2 * (p * z).sum(dim=-1).mean()


@torch.no_grad()
def ema_update(online, target, tau):
    for po, pt in zip(online.parameters(), target.parameters()):
        pt.mul_(tau).add_(po, alpha=1 - tau)


class PairTransform:
    def __init__(self, tf):
        self.tf = tf

    def __call__(self, x):
        return self.tf(x), self.tf(x)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=100)
    ap.add_argument("--batch_size", type=int, default=256)
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--tau", type=float, default=0.996)
    args = ap.parse_args()

    aug = T.Compose([
        T.RandomResizedCrop(96, scale=(0.2, 1.0)),
        T.RandomHorizontalFlip(),
        T.RandomApply([T.ColorJitter(0.4, 0.4, 0.2, 0.1)], p=0.8),
        T.RandomGrayscale(0.2),
        T.RandomApply([T.GaussianBlur(9)], p=0.5),
        T.ToTensor(),
    ])
    ds = torchvision.datasets.STL10("data", split="unlabeled", download=True, transform=PairTransform(aug))
    loader = DataLoader(ds, batch_size=args.batch_size, shuffle=True, num_workers=8, drop_last=True, pin_memory=True)

    backbone = torchvision.models.resnet18()
    backbone.fc = nn.Identity()
    online = nn.Sequential(backbone, mlp(512)).cuda()
    predictor = mlp(256, hidden=4096, out=256).cuda()
    target_net = copy.deepcopy(online)

    optimizer = torch.optim.Adam(list(online.parameters()) + list(predictor.parameters()), lr=args.lr)

    for epoch in range(args.epochs):
        for (v1, v2), _ in loader:
            x = torch.cat([v1, v2]).cuda(non_blocking=True)
            p1, p2 = predictor(online(x)).chunk(2)
            z1, z2 = target_net(x).chunk(2)  # expect: OOM113

            losses = []
            losses.append(byol_loss(p1, z2))
            losses.append(byol_loss(p2, z1))
            loss = torch.stack(losses).mean()

            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            ema_update(online, target_net, args.tau)
        print(f"epoch {epoch}: loss {loss.item():.4f}")
        torch.save(online[0].state_dict(), "byol_resnet18.pt")


if __name__ == "__main__":
    main()
