"""Fine-tune torchvision's RAFT-small on synthetic image pairs (FlyingChairs-like crops).

Loss is the usual RAFT "sequence loss": every intermediate flow prediction is supervised, later
iterations weighted more (gamma ** (N - i - 1)).
"""
import time

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from torchvision.models.optical_flow import raft_small

DEFAULTS = {
    "batch_size": 4,
    "crop": (368, 496),
    "num_flow_updates": 12,
    "lr": 4e-4,
    "weight_decay": 1e-4,
    "gamma": 0.8,
    "max_flow": 400.0,
    "steps": 4,
    "num_workers": 2,
}
# things I change between runs; merged over the defaults
OVERRIDES = {
    "batch_size": 8,
    "num_flow_updates": 12,
}
cfg = {**DEFAULTS, **OVERRIDES}


class SyntheticFlowPairs(Dataset):
    def __init__(self, n, crop):
        self.n = n
        self.h, self.w = crop

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        img1 = torch.rand(3, self.h, self.w) * 2 - 1  # RAFT expects [-1, 1]
        img2 = torch.rand(3, self.h, self.w) * 2 - 1
        flow = torch.randn(2, self.h, self.w) * 5
        valid = (torch.rand(self.h, self.w) > 0.05).float()
        return img1, img2, flow, valid


def sequence_loss(flow_preds, flow_gt, valid, gamma, max_flow):
    mag = torch.sum(flow_gt ** 2, dim=1).sqrt()
    valid = (valid >= 0.5) & (mag < max_flow)
    n = len(flow_preds)
    loss = 0.0
    for i, pred in enumerate(flow_preds):
        w = gamma ** (n - i - 1)
        l1 = (pred - flow_gt).abs().sum(dim=1)
        loss = loss + w * (valid * l1).mean()
    epe = torch.sum((flow_preds[-1] - flow_gt) ** 2, dim=1).sqrt()[valid]
    return loss, epe.mean()


def main():
    device = torch.device("cuda")
    model = raft_small(weights=None, progress=False).to(device)
    model.train()

    ds = SyntheticFlowPairs(cfg["batch_size"] * cfg["steps"], cfg["crop"])
    loader = DataLoader(ds, batch_size=cfg["batch_size"], shuffle=True, num_workers=cfg["num_workers"],
                        pin_memory=True, drop_last=True)

    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg["lr"], weight_decay=cfg["weight_decay"], eps=1e-8)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=cfg["lr"], total_steps=cfg["steps"] + 100,
                                                    pct_start=0.05, cycle_momentum=False, anneal_strategy="linear")

    t0 = time.time()
    for step, (img1, img2, flow, valid) in enumerate(loader):
        img1, img2 = img1.to(device, non_blocking=True), img2.to(device, non_blocking=True)
        flow, valid = flow.to(device), valid.to(device)

        flow_preds = model(img1, img2, num_flow_updates=cfg["num_flow_updates"])
        loss, epe = sequence_loss(flow_preds, flow, valid, cfg["gamma"], cfg["max_flow"])

        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        optimizer.step()
        scheduler.step()
        print(f"step {step} loss {loss.item():.3f} epe {epe.item():.3f} ({time.time() - t0:.1f}s)")

    print("max allocated GiB", torch.cuda.max_memory_allocated() / 2 ** 30)


if __name__ == "__main__":
    main()
