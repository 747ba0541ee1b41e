"""SimCLR pre-training on STL-10 unlabeled split with a kNN monitor."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from torch.utils.data import DataLoader
from torchvision import transforms


class TwoCropsTransform:
    def __init__(self, base_transform):
        self.base_transform = base_transform

    def __call__(self, x):
        return [self.base_transform(x), self.base_transform(x)]


class SimCLR(nn.Module):
    def __init__(self, feature_dim=128):
        super().__init__()
        backbone = torchvision.models.resnet18(weights=None)
        backbone.fc = nn.Identity()
        self.encoder = backbone
        self.projector = nn.Sequential(nn.Linear(512, 512), nn.ReLU(inplace=True), nn.Linear(512, feature_dim))

    def forward(self, x):
        h = self.encoder(x)
        z = self.projector(h)
        return h, F.normalize(z, dim=-1)


def nt_xent(z1, z2, temperature=0.5):
    z = torch.cat([z1, z2], dim=0)
    n = z1.size(0)
    sim = z @ z.t() / temperature
    sim.fill_diagonal_(float("-inf"))
    targets = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)]).to(z.device)
    return F.cross_entropy(sim, targets)


@torch.no_grad()
def knn_predict(feature, feature_bank, feature_labels, classes, knn_k=200, knn_t=0.1):
    sim_matrix = torch.mm(feature, feature_bank)
    sim_weight, sim_indices = sim_matrix.topk(k=knn_k, dim=-1)
    sim_labels = torch.gather(feature_labels.expand(feature.size(0), -1), dim=-1, index=sim_indices)
    sim_weight = (sim_weight / knn_t).exp()
    one_hot = torch.zeros(feature.size(0) * knn_k, classes, device=sim_labels.device)
    one_hot = one_hot.scatter(dim=-1, index=sim_labels.view(-1, 1), value=1.0)
    pred_scores = torch.sum(one_hot.view(feature.size(0), -1, classes) * sim_weight.unsqueeze(dim=-1), dim=1)
    return pred_scores.argsort(dim=-1, descending=True)


def knn_monitor(net, memory_loader, test_loader, classes=10):
    net.eval()
    feature_bank = []
    total_top1, total_num = 0.0, 0
    with torch.no_grad():
        for data, _ in memory_loader:
            feature, _ = net(data.cuda(non_blocking=True))
            feature_bank.append(F.normalize(feature, dim=1))
        feature_bank = torch.cat(feature_bank, dim=0).t().contiguous()
        feature_labels = torch.tensor(memory_loader.dataset.labels, device=feature_bank.device)
        for data, target in test_loader:
            data, target = data.cuda(non_blocking=True), target.cuda(non_blocking=True)
            feature, _ = net(data)
            pred_labels = knn_predict(F.normalize(feature, dim=1), feature_bank, feature_labels, classes)
            total_num += data.size(0)
            total_top1 += (pred_labels[:, 0] == target).float().sum().item()
    return total_top1 / total_num * 100


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--temperature", type=float, default=0.5)
    args = parser.parse_args()

    aug = transforms.Compose([
        transforms.RandomResizedCrop(96),
        transforms.RandomHorizontalFlip(),
        transforms.RandomApply([transforms.ColorJitter(0.4, 0.4, 0.4, 0.1)], p=0.8),
        transforms.RandomGrayscale(p=0.2),
        transforms.ToTensor(),
    ])
    plain = transforms.ToTensor()
    train_set = torchvision.datasets.STL10("data", split="unlabeled", transform=TwoCropsTransform(aug), download=True)
    memory_set = torchvision.datasets.STL10("data", split="train", transform=plain, download=True)
    test_set = torchvision.datasets.STL10("data", split="test", transform=plain, download=True)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True, num_workers=8, drop_last=True)
    memory_loader = DataLoader(memory_set, batch_size=512, num_workers=8)
    test_loader = DataLoader(test_set, batch_size=512, num_workers=8)

    model = SimCLR().cuda()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=1e-6)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)

    embedding_snapshots = []  # for the t-SNE figure in the write-up
    for epoch in range(args.epochs):
        model.train()
        total_loss, total_num = 0.0, 0
        optimizer.zero_grad()
        for step, ((x1, x2), _) in enumerate(train_loader):
            x1, x2 = x1.cuda(non_blocking=True), x2.cuda(non_blocking=True)
            _, z1 = model(x1)
            _, z2 = model(x2)
            loss = nt_xent(z1, z2, args.temperature)
            loss.backward()
            optimizer.step()  # expect: OOM103
            total_num += x1.size(0)
            total_loss += loss.item() * x1.size(0)
            if step % 200 == 0:
                embedding_snapshots.append(z1)  # expect: OOM101
        scheduler.step()
        acc = knn_monitor(model, memory_loader, test_loader)
        print(f"epoch {epoch}: loss {total_loss / total_num:.4f} knn@1 {acc:.2f}")

    torch.save({"model": model.state_dict(),
                "snapshots": [s.detach().cpu() for s in embedding_snapshots]}, "simclr_stl10.pt")


if __name__ == "__main__":
    main()
