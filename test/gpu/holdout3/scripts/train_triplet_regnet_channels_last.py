"""Metric learning (triplet loss) for product retrieval, RegNetY-1.6GF backbone from torchvision.

anchor / positive / negative go through the shared backbone in three separate forward calls.
"""
import os
import random

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from torch.utils.data import DataLoader, Dataset

ARCH = os.environ.get("ARCH", "regnet_y_1_6gf")
EMBED_DIM = 256
IMG = 160
TRIPLETS_PER_BATCH = 48
MARGIN = 0.2
STEPS = 6


class TripletFolder(Dataset):
    """Stands in for a folder of product photos grouped by SKU."""

    def __init__(self, n_items, img):
        self.n_items, self.img = n_items, img

    def __len__(self):
        return self.n_items

    def _load(self, sku):
        return torch.rand(3, self.img, self.img)

    def __getitem__(self, i):
        neg = random.randrange(self.n_items)
        return self._load(i), self._load(i), self._load(neg)


class EmbeddingNet(nn.Module):
    def __init__(self, arch, dim):
        super().__init__()
        self.backbone = torchvision.models.get_model(arch, weights=None)
        in_f = self.backbone.fc.in_features
        self.backbone.fc = nn.Identity()
        self.neck = nn.Sequential(nn.Linear(in_f, dim), nn.BatchNorm1d(dim))

    def forward(self, x):
        return F.normalize(self.neck(self.backbone(x)), dim=-1)


def main():
    device = torch.device("cuda")
    net = EmbeddingNet(ARCH, EMBED_DIM).to(device, memory_format=torch.channels_last)
    opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-5)
    loader = DataLoader(TripletFolder(TRIPLETS_PER_BATCH * STEPS, IMG), batch_size=TRIPLETS_PER_BATCH,
                        shuffle=True, num_workers=4, drop_last=True)
    criterion = nn.TripletMarginLoss(margin=MARGIN)

    net.train()
    for step, (a, p, n) in enumerate(loader):
        a, p, n = (t.to(device, non_blocking=True).contiguous(memory_format=torch.channels_last) for t in (a, p, n))
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            ea = net(a)
            ep = net(p)
            en = net(n)
            loss = criterion(ea.float(), ep.float(), en.float())
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"step {step}  triplet loss {loss.item():.4f}")
    print("peak %.2f GiB" % (torch.cuda.max_memory_allocated() / 2 ** 30))


if __name__ == "__main__":
    main()
