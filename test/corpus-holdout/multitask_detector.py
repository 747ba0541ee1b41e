"""Multi-task head on a shared backbone: classification + box regression + keypoints.

Research prototype; loss weights are learned (homoscedastic uncertainty, Kendall et al. 2018).
"""
import argparse
import json
from collections import defaultdict

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
import torchvision

TASKS = ("cls", "box", "kpt")


class MultiHead(nn.Module):
    def __init__(self, num_classes=20, num_kpts=17):
        super().__init__()
        backbone = torchvision.models.resnet34(weights=None)
        self.backbone = nn.Sequential(*list(backbone.children())[:-1])
        self.cls_head = nn.Linear(512, num_classes)
        self.box_head = nn.Sequential(nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 4))
        self.kpt_head = nn.Linear(512, num_kpts * 2)
        self.log_vars = nn.Parameter(torch.zeros(len(TASKS)))

    def forward(self, x):
        f = self.backbone(x).flatten(1)
        return {"cls": self.cls_head(f), "box": self.box_head(f).sigmoid(), "kpt": self.kpt_head(f)}


def task_losses(out, batch):
    return {
        "cls": F.cross_entropy(out["cls"], batch["label"]),
        "box": F.smooth_l1_loss(out["box"], batch["box"]),
        "kpt": F.mse_loss(out["kpt"], batch["kpt"]),
    }


def fake_data(n=2048):
    x = torch.randn(n, 3, 128, 128)
    return TensorDataset(x, torch.randint(0, 20, (n,)), torch.rand(n, 4), torch.randn(n, 34))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--bs", type=int, default=64)
    args = ap.parse_args()

    device = "cuda"
    model = MultiHead().to(device)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    loader = DataLoader(fake_data(), batch_size=args.bs, shuffle=True, drop_last=True)

    task_history = defaultdict(list)
    epoch_summary = []
    for epoch in range(args.epochs):
        model.train()
        for x, label, box, kpt in loader:
            batch = {"label": label.to(device), "box": box.to(device), "kpt": kpt.to(device)}
            out = model(x.to(device))
            losses = task_losses(out, batch)

            # uncertainty weighting: L = sum_i exp(-s_i) * L_i + s_i
            weighted = []
            for i, name in enumerate(TASKS):
                weighted.append(torch.exp(-model.log_vars[i]) * losses[name] + model.log_vars[i])
            loss = torch.stack(weighted).sum()

            opt.zero_grad()
            loss.backward(retain_graph=True)  # expect: OOM107
            opt.step()

            for name, value in losses.items():
                task_history[name].append(value)  # expect: OOM101
            task_history["weights"].append(model.log_vars.detach().exp().neg().tolist())

        summary = {name: torch.stack(task_history[name][-len(loader):]).mean().item() for name in TASKS}
        summary["epoch"] = epoch
        epoch_summary.append(summary)
        print(json.dumps(summary))

    torch.save(model.state_dict(), "multitask.pt")


if __name__ == "__main__":
    main()
