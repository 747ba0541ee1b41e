# person re-ID baseline (Market-1501), triplet + ID loss -- course project, v3
import argparse
import os
import random
from collections import defaultdict

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from PIL import Image
from torch.utils.data import DataLoader, Dataset, Sampler
import torchvision.transforms as T


def parse_pid(fn):
    return int(fn.split("_")[0])


class Market1501(Dataset):
    def __init__(self, root, tf):
        self.files = [f for f in sorted(os.listdir(root)) if f.endswith(".jpg") and not f.startswith("-1")]
        self.root = root
        pids = sorted({parse_pid(f) for f in self.files})
        self.pid2label = {p: i for i, p in enumerate(pids)}
        self.labels = [self.pid2label[parse_pid(f)] for f in self.files]
        self.tf = tf

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        img = Image.open(os.path.join(self.root, self.files[i])).convert("RGB")
        return self.tf(img), self.labels[i]


class PKSampler(Sampler):
    def __init__(self, labels, p=16, k=4):
        self.index = defaultdict(list)
        for i, l in enumerate(labels):
            self.index[l].append(i)
        self.p, self.k = p, k

    def __iter__(self):
        pids = list(self.index)
        random.shuffle(pids)
        for start in range(0, len(pids) - self.p + 1, self.p):
            for pid in pids[start:start + self.p]:
                yield from random.choices(self.index[pid], k=self.k)

    def __len__(self):
        return len(self.index) // self.p * self.p * self.k


def batch_hard_triplet(emb, labels, margin=0.3):
    dist = torch.cdist(emb, emb)
    same = labels[:, None] == labels[None, :]
    hardest_pos = (dist * same.float()).max(1).values
    hardest_neg = (dist + 1e5 * same.float()).min(1).values
    return F.relu(hardest_pos - hardest_neg + margin).mean()


class ReIDNet(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        base = torchvision.models.resnet50(weights="IMAGENET1K_V2")
        base.layer4[0].conv2.stride = (1, 1)
        base.layer4[0].downsample[0].stride = (1, 1)
        self.backbone = nn.Sequential(*list(base.children())[:-1])
        self.bnneck = nn.BatchNorm1d(2048)
        self.classifier = nn.Linear(2048, num_classes, bias=False)

    def forward(self, x):
        f = self.backbone(x).flatten(1)
        return f, self.classifier(self.bnneck(f))


def validate(model, loader):
    model.eval()
    feats, pids = [], []
    for imgs, labels in loader:
        feats.append(model(imgs.cuda())[0].cpu())  # expect: OOM104, OOM101
        pids.extend(labels.tolist())
    feats = F.normalize(torch.cat(feats), dim=1)
    sim = feats @ feats.t()
    sim.fill_diagonal_(-1)
    top1 = torch.tensor(pids)[sim.argmax(1)]
    return (top1 == torch.tensor(pids)).float().mean().item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default="data/Market-1501-v15.09.15")
    ap.add_argument("--epochs", type=int, default=120)
    args = ap.parse_args()

    tf = T.Compose([T.Resize((256, 128)), T.RandomHorizontalFlip(), T.Pad(10), T.RandomCrop((256, 128)), T.ToTensor(),
                    T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
    tf_test = T.Compose([T.Resize((256, 128)), T.ToTensor(), T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
    train_set = Market1501(os.path.join(args.root, "bounding_box_train"), tf)
    query_set = Market1501(os.path.join(args.root, "query"), tf_test)
    train_loader = DataLoader(train_set, batch_size=64, sampler=PKSampler(train_set.labels), num_workers=8, drop_last=True)
    query_loader = DataLoader(query_set, batch_size=128, num_workers=8)

    model = ReIDNet(len(train_set.pid2label)).cuda()
    optimizer = torch.optim.Adam(model.parameters(), lr=3.5e-4, weight_decay=5e-4)

    recent_losses = []
    hard_examples = []
    for epoch in range(args.epochs):
        model.train()
        for step, (imgs, labels) in enumerate(train_loader):
            imgs, labels = imgs.cuda(), labels.cuda()
            feat, logits = model(imgs)
            tri = batch_hard_triplet(feat, labels)
            loss = F.cross_entropy(logits, labels, label_smoothing=0.1) + tri
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

            recent_losses.insert(0, loss)  # expect: OOM101
            del recent_losses[50:]
            if tri.item() > 0.2:
                hard_examples.extend([feat[0], feat[-1]])  # expect: OOM101
            if step % 100 == 0:
                print(f"epoch {epoch} step {step}: loss {torch.stack(recent_losses).mean().item():.4f}")
        if epoch % 10 == 0:
            print(f"epoch {epoch}: query self-retrieval rank-1 {validate(model, query_loader):.4f}")


if __name__ == "__main__":
    main()
