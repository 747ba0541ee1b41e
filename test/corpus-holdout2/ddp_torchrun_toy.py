#!/usr/bin/env python
# torchrun --nproc_per_node=4 ddp_torchrun_toy.py --resume runs/last.pt
# note: we never wrap with nn.DataParallel here, DDP only
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

EPOCHS = 10
BATCH_SIZE = 256
HIDDEN = 4 * 256
STATS_PATH = "data/feature_stats.pt"


class ToyNet(nn.Module):
    def __init__(self, d_in=128, hidden=HIDDEN, n_classes=10):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(d_in, hidden),
            nn.GELU(),
            nn.Linear(hidden, hidden),
            nn.GELU(),
            nn.Linear(hidden, n_classes),
        )

    def forward(self, x):
        return self.net(x)


def setup():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    return dist.get_rank(), local_rank, dist.get_world_size()


@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    correct = torch.zeros(1, device="cuda")
    total = torch.zeros(1, device="cuda")
    for x, y in loader:
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        logits = model(x)
        correct += (logits.argmax(-1) == y).sum()
        total += y.numel()
    dist.all_reduce(correct)
    dist.all_reduce(total)
    model.train()
    return (correct / total).item()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--resume", default="")
    parser.add_argument("--extra", default="")
    parser.add_argument("--lr", type=float, default=3e-4)
    args = parser.parse_args()

    rank, local_rank, world_size = setup()

    model = ToyNet().cuda()
    stats = None
    if rank == 0 and os.path.exists(STATS_PATH):
        stats = torch.load(STATS_PATH)
        print("feature stats:", {k: v.shape for k, v in stats.items()})
    if args.resume:
        ckpt = torch.load(args.resume, map_location="cpu")
        model.load_state_dict(ckpt["model"])
    if args.extra:
        extra = torch.load(args.extra, "cpu")
        model.net[0].bias.data.copy_(extra["bias0"])
    model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)

    x = torch.randn(50_000, 128)
    y = torch.randint(0, 10, (50_000,))
    ds = TensorDataset(x, y)
    sampler = DistributedSampler(ds)
    loader = DataLoader(ds, batch_size=BATCH_SIZE, sampler=sampler, num_workers=2, pin_memory=True)
    val_loader = DataLoader(TensorDataset(x[:5000], y[:5000]), batch_size=1024)

    loss_log = []
    for epoch in range(EPOCHS):
        sampler.set_epoch(epoch)
        model.train()
        for step, (xb, yb) in enumerate(loader):
            xb = xb.cuda(non_blocking=True)
            yb = yb.cuda(non_blocking=True)
            with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
                loss = F.cross_entropy(model(xb), yb)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            if step % 50 == 0:
                reduced = loss.detach()
                loss_log.append(reduced)
        epoch_losses = torch.stack(loss_log)
        dist.all_reduce(epoch_losses, op=dist.ReduceOp.AVG)
        acc = evaluate(model, val_loader)
        if rank == 0:
            print(f"epoch {epoch} loss {epoch_losses.mean().item():.4f} acc {acc:.3f}")
            torch.save({"model": model.module.state_dict()}, "runs/last.pt")
        loss_log.clear()

    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
