"""DDP training of a small ViT on CIFAR-10 with global loss/throughput statistics."""
import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
import torchvision
import torchvision.transforms as T
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

local_rank = int(os.environ["LOCAL_RANK"])
dist.init_process_group("nccl")
device = torch.device(f"cuda:{local_rank}")


class PatchEmbed(nn.Module):
    def __init__(self, patch=4, dim=384):
        super().__init__()
        self.proj = nn.Conv2d(3, dim, patch, patch)

    def forward(self, x):
        return self.proj(x).flatten(2).transpose(1, 2)


class ViT(nn.Module):
    def __init__(self, dim=384, depth=6, heads=6, n_classes=10):
        super().__init__()
        self.embed = PatchEmbed(dim=dim)
        self.cls = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos = nn.Parameter(torch.zeros(1, 65, dim))
        layer = nn.TransformerEncoderLayer(dim, heads, dim * 4, dropout=0.1, batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, depth)
        self.head = nn.Linear(dim, n_classes)

    def forward(self, x):
        x = self.embed(x)
        x = torch.cat([self.cls.expand(x.size(0), -1, -1), x], dim=1) + self.pos
        return self.head(self.blocks(x)[:, 0])


def train_one_epoch(model, loader, optimizer, epoch, log_every=50):
    model.train()
    t0 = time.time()
    for step, (x, y) in enumerate(loader):
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.cross_entropy(model(x), y, label_smoothing=0.1)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if step % log_every == 0:
            stats = torch.zeros(2, device="cuda")  # expect: OOM111
            stats[0] = loss.item()
            stats[1] = x.size(0) / (time.time() - t0)
            dist.all_reduce(stats)
            if dist.get_rank() == 0:
                print(f"epoch {epoch} step {step}: loss {stats[0].item() / dist.get_world_size():.4f} "
                      f"throughput {stats[1].item():.0f} img/s")
            t0 = time.time()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=100)
    ap.add_argument("--batch_size", type=int, default=128)
    ap.add_argument("--ckpt", default="")
    args = ap.parse_args()

    tf = T.Compose([T.RandomCrop(32, 4), T.RandomHorizontalFlip(), T.ToTensor()])
    ds = torchvision.datasets.CIFAR10("data", train=True, download=(local_rank == 0), transform=tf)
    sampler = DistributedSampler(ds)
    loader = DataLoader(ds, batch_size=args.batch_size, sampler=sampler, num_workers=4, pin_memory=True)

    model = ViT().to(device)
    if args.ckpt:
        model.load_state_dict(torch.load(args.ckpt, map_location=device))
    model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.05)

    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        train_one_epoch(model, loader, optimizer, epoch)
        if dist.get_rank() == 0:
            torch.save(model.module.state_dict(), "vit_cifar.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
