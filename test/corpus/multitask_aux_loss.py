"""Multi-task depth + segmentation on NYUv2 with an auxiliary edge loss and gradient accumulation."""
import argparse
from collections import defaultdict

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from torch.utils.data import DataLoader

from nyu import NYUv2  # local dataset wrapper


class MultiTaskNet(nn.Module):
    def __init__(self, n_classes=13):
        super().__init__()
        backbone = torchvision.models.resnet34(weights="DEFAULT")
        self.stem = nn.Sequential(*list(backbone.children())[:-2])
        self.seg_head = nn.Sequential(nn.Conv2d(512, 256, 3, padding=1), nn.ReLU(), nn.Conv2d(256, n_classes, 1))
        self.depth_head = nn.Sequential(nn.Conv2d(512, 256, 3, padding=1), nn.ReLU(), nn.Conv2d(256, 1, 1))
        self.edge_head = nn.Conv2d(512, 1, 1)

    def forward(self, x):
        h = self.stem(x)
        size = x.shape[-2:]
        up = lambda t: F.interpolate(t, size=size, mode="bilinear", align_corners=False)
        return up(self.seg_head(h)), up(self.depth_head(h)), up(self.edge_head(h))


def sobel_edges(depth):
    kx = torch.tensor([[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]], dtype=depth.dtype, device=depth.device).view(1, 1, 3, 3)
    gx = F.conv2d(depth, kx, padding=1)
    gy = F.conv2d(depth, kx.transpose(2, 3), padding=1)
    return (gx.pow(2) + gy.pow(2)).sqrt()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=40)
    ap.add_argument("--accum", type=int, default=4)
    ap.add_argument("--aux-weight", type=float, default=0.1)
    args = ap.parse_args()
    device = torch.device("cuda")

    loader = DataLoader(NYUv2("data/nyuv2", split="train"), batch_size=8, shuffle=True, num_workers=8)
    model = MultiTaskNet().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-4)
    task_weights = {"seg": 1.0, "depth": 0.5}
    loss_meter = defaultdict(float)
    val_history = []

    for epoch in range(args.epochs):
        model.train()
        optimizer.zero_grad()
        for step, (img, seg, depth) in enumerate(loader):
            img, seg, depth = img.to(device), seg.to(device), depth.to(device)
            seg_logits, depth_pred, edge_pred = model(img)

            task_losses = {
                "seg": F.cross_entropy(seg_logits, seg, ignore_index=255),
                "depth": F.l1_loss(depth_pred, depth),
            }
            loss = sum(task_weights[k] * v for k, v in task_losses.items())
            aux = F.binary_cross_entropy_with_logits(edge_pred, (sobel_edges(depth) > 0.1).float())
            loss = loss + args.aux_weight * aux
            (loss / args.accum).backward()

            if (step + 1) % args.accum == 0:
                nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                optimizer.zero_grad()

            for name, value in task_losses.items():
                loss_meter[name] += value.item()
            loss_meter["aux"] += aux.item()

        # quick check on a held-out batch
        model.eval()
        with torch.no_grad():
            img, seg, depth = next(iter(loader))
            seg_logits, depth_pred, _ = model(img.to(device))
            miou_proxy = (seg_logits.argmax(1) == seg.to(device)).float().mean()
        val_history.append(miou_proxy)
        print(f"epoch {epoch}: " + ", ".join(f"{k} {v / len(loader):.3f}" for k, v in loss_meter.items())
              + f", pixel acc {miou_proxy.item():.3f}")
        loss_meter.clear()

    torch.save(model.state_dict(), "multitask.pt")


if __name__ == "__main__":
    main()
