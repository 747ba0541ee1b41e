"""Semantic FPN (Kirillov et al. 2019) for 150-class scene parsing, assembled from library parts:
torchvision's ConvNeXt-Tiny turned into a multi-scale feature extractor with
torchvision.models.feature_extraction.create_feature_extractor, torchvision.ops.FeaturePyramidNetwork,
and a hand-written merge head. The stem and the first stage are frozen by parameter-name pattern."""
import argparse
import re

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from torchvision.models import convnext_tiny
from torchvision.models.feature_extraction import create_feature_extractor
from torchvision.ops import FeaturePyramidNetwork

RETURN_NODES = {"features.1": "c2", "features.3": "c3", "features.5": "c4", "features.7": "c5"}
IN_CHANNELS = [96, 192, 384, 768]
FREEZE_PATTERNS = [r"^features\.0\.", r"^features\.1\."]


class SemanticFPNHead(nn.Module):
    def __init__(self, fpn_dim, head_dim, num_classes):
        super().__init__()
        self.scale_heads = nn.ModuleList()
        for i in range(4):  # c2..c5 -> upsample 0,1,2,3 times to stride 4
            layers, c = [], fpn_dim
            for j in range(max(1, i)):
                layers += [nn.Conv2d(c, head_dim, 3, padding=1, bias=False), nn.GroupNorm(32, head_dim),
                           nn.ReLU(inplace=True)]
                if i > 0:
                    layers.append(nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False))
                c = head_dim
            self.scale_heads.append(nn.Sequential(*layers))
        self.classifier = nn.Conv2d(head_dim, num_classes, 1)

    def forward(self, feats):
        out = sum(head(f) for head, f in zip(self.scale_heads, feats))
        return self.classifier(out)


class SegModel(nn.Module):
    def __init__(self, num_classes, fpn_dim=256, head_dim=128):
        super().__init__()
        self.body = create_feature_extractor(convnext_tiny(weights=None, stochastic_depth_prob=0.2),
                                             return_nodes=RETURN_NODES)
        self.fpn = FeaturePyramidNetwork(IN_CHANNELS, fpn_dim)
        self.head = SemanticFPNHead(fpn_dim, head_dim, num_classes)

    def forward(self, x):
        feats = self.fpn(self.body(x))
        logits = self.head(list(feats.values()))
        return F.interpolate(logits, size=x.shape[-2:], mode="bilinear", align_corners=False)


class ScenesDataset(Dataset):
    def __init__(self, n, size, num_classes):
        self.n, self.size, self.num_classes = n, size, num_classes

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        img = torch.randn(3, self.size, self.size)
        mask = torch.randint(0, self.num_classes, (self.size, self.size))
        mask[torch.rand(self.size, self.size) < 0.05] = 255
        return img, mask


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--crop-size", type=int, default=512)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--num-classes", type=int, default=150)
    ap.add_argument("--iters", type=int, default=8)
    ap.add_argument("--lr", type=float, default=2e-4)
    args = ap.parse_args()

    device = torch.device("cuda")
    model = SegModel(args.num_classes)
    frozen = 0
    for name, p in model.body.named_parameters():
        if any(re.match(pat, name) for pat in FREEZE_PATTERNS):
            p.requires_grad_(False)
            frozen += p.numel()
    model.to(device)
    print(f"frozen {frozen:,} backbone params")

    backbone = [p for n, p in model.named_parameters() if n.startswith("body.") and p.requires_grad]
    rest = [p for n, p in model.named_parameters() if not n.startswith("body.")]
    opt = torch.optim.AdamW([{"params": backbone, "lr": args.lr * 0.1}, {"params": rest}], lr=args.lr,
                            weight_decay=0.01)
    sched = torch.optim.lr_scheduler.PolynomialLR(opt, total_iters=args.iters, power=1.0)
    loader = DataLoader(ScenesDataset(args.batch_size * args.iters, args.crop_size, args.num_classes),
                        batch_size=args.batch_size, shuffle=True, num_workers=4, drop_last=True)
    model.train()
    for it, (img, mask) in enumerate(loader):
        img, mask = img.to(device, non_blocking=True), mask.to(device, non_blocking=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(img)
        loss = F.cross_entropy(logits.float(), mask, ignore_index=255)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        print(f"iter {it} loss {loss.item():.4f}")
    print("max allocated GiB", torch.cuda.max_memory_allocated() / 2**30)


if __name__ == "__main__":
    main()
