"""Evaluation harness for the facial-keypoint regressor.

Every entry point disables autograd in a different way (different authors):
`with no_grad()`, `torch.set_grad_enabled(False)`, `@torch.inference_mode()`,
and a whole-loop `with torch.no_grad()`.
"""
import argparse
import json

import numpy as np
import torch
import torch.nn as nn
from torch import no_grad
from torch.utils.data import DataLoader

from keypoints_data import KeypointDataset  # local module


class KeypointNet(nn.Module):
    def __init__(self, n_points=68):
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(64, 128, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(4),
        )
        self.head = nn.Linear(128 * 16, n_points * 2)

    def forward(self, x):
        return self.head(self.backbone(x).flatten(1)).view(x.size(0), -1, 2)


def nme(pred, gt, interocular):
    return ((pred - gt).norm(dim=-1).mean(dim=-1) / interocular).mean()


def evaluate(model, loader, device):
    model.eval()
    errors = []
    for img, kp, iod in loader:
        img, kp, iod = img.to(device), kp.to(device), iod.to(device)
        with no_grad():
            pred = model(img)
            errors.append(nme(pred, kp, iod))
    return torch.stack(errors).mean().item()


def test(model, loader, device):
    torch.set_grad_enabled(False)
    model.eval()
    per_image = []
    for img, kp, iod in loader:
        pred = model(img.to(device))
        per_image.append(((pred - kp.to(device)).norm(dim=-1).mean(dim=-1) / iod.to(device)).cpu())
    torch.set_grad_enabled(True)
    per_image = torch.cat(per_image)
    return {"nme": per_image.mean().item(), "fr@0.1": (per_image > 0.1).float().mean().item()}


@torch.inference_mode()
def infer(model, loader, device):
    model.eval()
    outputs = []
    for img, _, _ in loader:
        outputs.append(model(img.to(device)).cpu())
    return torch.cat(outputs)


def validate(model, loader, device, flip_pairs):
    model.eval()
    total = 0.0
    with torch.no_grad():
        for img, kp, iod in loader:
            img, kp, iod = img.to(device), kp.to(device), iod.to(device)
            p1 = model(img)
            p2 = model(torch.flip(img, dims=[3]))
            p2[..., 0] = img.size(3) - 1 - p2[..., 0]
            p2 = p2[:, flip_pairs]
            total += nme((p1 + p2) / 2, kp, iod) * img.size(0)
    return total.item() / len(loader.dataset)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", default="kpnet.pt")
    ap.add_argument("--split", default="300w_common")
    args = ap.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    model = KeypointNet().to(device)
    model.load_state_dict(torch.load(args.ckpt, map_location=device))
    ds = KeypointDataset(args.split)
    loader = DataLoader(ds, batch_size=64, num_workers=4)
    flip_pairs = torch.tensor(ds.flip_permutation)

    report = {
        "evaluate_nme": evaluate(model, loader, device),
        "test": test(model, loader, device),
        "validate_flip_nme": validate(model, loader, device, flip_pairs),
    }
    preds = infer(model, loader, device)
    np.save(f"preds_{args.split}.npy", preds.numpy())
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
