"""Deep metric learning on CUB-200 (batch-hard triplet loss, P x K sampler, Recall@K)."""
import random
from collections import defaultdict

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Sampler
from torchvision import datasets, models, transforms


class PKSampler(Sampler):
    """P classes x K images per batch."""

    def __init__(self, labels, p=16, k=4):
        self.p, self.k = p, k
        self.by_class = defaultdict(list)
        for i, y in enumerate(labels):
            self.by_class[y].append(i)
        self.classes = [c for c, idx in self.by_class.items() if len(idx) >= k]

    def __iter__(self):
        random.shuffle(self.classes)
        for i in range(0, len(self.classes) - self.p + 1, self.p):
            batch = []
            for c in self.classes[i:i + self.p]:
                batch.extend(random.sample(self.by_class[c], self.k))
            yield batch

    def __len__(self):
        return len(self.classes) // self.p


class Embedder(nn.Module):
    def __init__(self, dim=128):
        super().__init__()
        trunk = models.resnet50(weights="IMAGENET1K_V2")
        trunk.fc = nn.Identity()
        self.trunk = trunk
        self.head = nn.Linear(2048, dim)

    def forward(self, x):
        return F.normalize(self.head(self.trunk(x)), dim=-1)


def batch_hard_triplet(emb, labels, margin=0.2):
    d = torch.cdist(emb, emb)
    same = labels[:, None] == labels[None, :]
    hardest_pos = (d * same.float()).max(1).values
    hardest_neg = (d + 1e5 * same.float()).min(1).values
    return F.relu(hardest_pos - hardest_neg + margin).mean()


class MetricTrainer:
    def __init__(self, model, lr=1e-5, device="cuda"):
        self.model = model.to(device)
        self.device = device
        self.opt = torch.optim.AdamW([
            {"params": model.trunk.parameters(), "lr": lr},
            {"params": model.head.parameters(), "lr": lr * 10},
        ], weight_decay=1e-4)
        self.history = {"train": [], "val": [], "recall@1": []}

    def train_epoch(self, loader):
        self.model.train()
        total, n = 0.0, 0
        for x, y in loader:
            x, y = x.to(self.device), y.to(self.device)
            emb = self.model(x)
            loss = batch_hard_triplet(emb, y)
            loss.backward()
            self.opt.step()  # expect: OOM103
            total += loss.item() * x.size(0)
            n += x.size(0)
        self.history["train"].append(total / n)

    def evaluate(self, loader):
        self.model.eval()
        val_loss, batches = 0.0, 0
        for x, y in loader:
            x, y = x.to(self.device), y.to(self.device)
            emb = self.model(x)  # expect: OOM104
            val_loss += batch_hard_triplet(emb, y)  # expect: OOM102
            batches += 1
        self.history["val"].append(float(val_loss) / max(batches, 1))
        return self.history["val"][-1]

    @torch.no_grad()
    def recall_at_k(self, loader, ks=(1, 2, 4, 8)):
        self.model.eval()
        embs, labels = [], []
        for x, y in loader:
            embs.append(self.model(x.to(self.device)))
            labels.append(y.to(self.device))
        embs, labels = torch.cat(embs), torch.cat(labels)
        sim = embs @ embs.T
        sim.fill_diagonal_(-float("inf"))
        topk = sim.topk(max(ks), dim=1).indices
        hits = labels[topk] == labels[:, None]
        out = {k: hits[:, :k].any(1).float().mean().item() for k in ks}
        self.history["recall@1"].append(out[1])
        return out


def main():
    tf_train = transforms.Compose([transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(),
                                   transforms.ToTensor(), transforms.Normalize([0.485, 0.456, 0.406],
                                                                               [0.229, 0.224, 0.225])])
    tf_test = transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor(),
                                  transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
    train_ds = datasets.ImageFolder("data/CUB_200_2011/train", tf_train)
    test_ds = datasets.ImageFolder("data/CUB_200_2011/test", tf_test)
    train_dl = DataLoader(train_ds, batch_sampler=PKSampler(train_ds.targets), num_workers=8)
    test_dl = DataLoader(test_ds, batch_size=128, num_workers=8)

    trainer = MetricTrainer(Embedder())
    for epoch in range(60):
        trainer.train_epoch(train_dl)
        v = trainer.evaluate(test_dl)
        r = trainer.recall_at_k(test_dl)
        print(f"[{epoch:02d}] train {trainer.history['train'][-1]:.4f} val {v:.4f} R@1 {r[1]:.3f} R@8 {r[8]:.3f}")
    torch.save(trainer.model.state_dict(), "embedder.pt")


if __name__ == "__main__":
    main()
