"""SimCLR on CIFAR-10 with a kNN monitor; keeps the last epoch's projections for a t-SNE plot."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
import torchvision.transforms as T
from torch.utils.data import DataLoader


class TwoViews:
    def __init__(self, tf):
        self.tf = tf

    def __call__(self, x):
        return self.tf(x), self.tf(x)


class SimCLR(nn.Module):
    def __init__(self, feat_dim=128):
        super().__init__()
        self.backbone = torchvision.models.resnet18(num_classes=10)
        self.backbone.conv1 = nn.Conv2d(3, 64, 3, 1, 1, bias=False)
        self.backbone.maxpool = nn.Identity()
        self.backbone.fc = nn.Identity()
        self.projector = nn.Sequential(nn.Linear(512, 2048), nn.ReLU(inplace=True), nn.Linear(2048, feat_dim))

    def forward(self, x, project=True):
        h = self.backbone(x)
        return self.projector(h) if project else h


def nt_xent(z1, z2, temperature):
    z = F.normalize(torch.cat([z1, z2]), dim=1)
    sim = z @ z.t() / temperature
    n = z1.size(0)
    sim.fill_diagonal_(float("-inf"))
    targets = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)]).to(z.device)
    return F.cross_entropy(sim, targets)


@torch.no_grad()
def knn_monitor(model, memory_loader, test_loader, k=200, t=0.1):
    model.eval()
    feats, labels = [], []
    for x, y in memory_loader:
        feats.append(F.normalize(model(x.cuda(non_blocking=True), project=False), dim=1))
        labels.append(y.cuda(non_blocking=True))
    feature_bank = torch.cat(feats).t().contiguous()
    label_bank = torch.cat(labels)
    correct = total = 0
    for x, y in test_loader:
        f = F.normalize(model(x.cuda(non_blocking=True), project=False), dim=1)
        sim = f @ feature_bank
        w, idx = sim.topk(k, dim=-1)
        votes = torch.zeros(f.size(0), 10, device=f.device)
        votes.scatter_add_(1, label_bank[idx], (w / t).exp())
        correct += (votes.argmax(1).cpu() == y).sum().item()
        total += y.numel()
    model.train()
    return correct / total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=200)
    ap.add_argument("--batch_size", type=int, default=512)
    ap.add_argument("--lr", type=float, default=0.06)
    ap.add_argument("--temperature", type=float, default=0.5)
    args = ap.parse_args()

    aug = T.Compose([
        T.RandomResizedCrop(32), T.RandomHorizontalFlip(),
        T.RandomApply([T.ColorJitter(0.4, 0.4, 0.4, 0.1)], p=0.8), T.RandomGrayscale(0.2), T.ToTensor(),
    ])
    train_set = torchvision.datasets.CIFAR10("data", train=True, download=True, transform=TwoViews(aug))
    memory_set = torchvision.datasets.CIFAR10("data", train=True, transform=T.ToTensor())
    test_set = torchvision.datasets.CIFAR10("data", train=False, transform=T.ToTensor())
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True, num_workers=8, drop_last=True, pin_memory=True)
    memory_loader = DataLoader(memory_set, batch_size=1024, num_workers=8)
    test_loader = DataLoader(test_set, batch_size=1024, num_workers=8)

    model = SimCLR().cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr * args.batch_size / 256, momentum=0.9, weight_decay=5e-4)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, args.epochs * len(train_loader))

    history = {"loss": [], "lr": []}
    tsne_feats = {}
    for epoch in range(args.epochs):
        model.train()
        for step, ((x1, x2), _) in enumerate(train_loader):
            x1, x2 = x1.cuda(non_blocking=True), x2.cuda(non_blocking=True)
            z1 = model(x1)
            z2 = model(x2)
            loss = nt_xent(z1, z2, args.temperature)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            history["lr"].append(scheduler.get_last_lr()[0])
            history["loss"].append(loss.item())
            scheduler.step()
            if epoch == args.epochs - 1:
                tsne_feats[step] = z1  # expect: OOM101
        if epoch % 10 == 0:
            print(f"epoch {epoch}: loss {history['loss'][-1]:.4f} knn acc {knn_monitor(model, memory_loader, test_loader):.4f}")

    torch.save({"model": model.state_dict(), "tsne": {k: v.detach().cpu() for k, v in tsne_feats.items()}}, "simclr.pt")


if __name__ == "__main__":
    main()
