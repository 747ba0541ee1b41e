"""Semantic segmentation (Cityscapes-like, 19 classes) with a timm backbone in features_only mode and a
hand-written FPN decoder (Panoptic-FPN style semantic head).

The decoder is sized from backbone.feature_info.channels(). fp16 autocast + GradScaler, poly LR, AdamW with a
10x lower LR on the pretrained-style backbone group.
"""
from dataclasses import dataclass, field
from typing import Tuple

import timm
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


@dataclass
class SegConfig:
    backbone: str = "convnext_tiny"
    out_indices: Tuple[int, ...] = (0, 1, 2, 3)
    fpn_dim: int = 256
    head_dim: int = 128
    num_classes: int = 19
    ignore_index: int = 255
    crop: Tuple[int, int] = (512, 512)
    batch_size: int = 16
    lr: float = 6e-4
    backbone_lr_mult: float = 0.1
    weight_decay: float = 0.01
    max_iters: int = 6
    power: float = 0.9
    drop_path: float = 0.2
    workers: int = 4
    amp: bool = True
    extra: dict = field(default_factory=dict)


def conv_gn_relu(cin, cout, k=3):
    return nn.Sequential(nn.Conv2d(cin, cout, k, padding=k // 2, bias=False), nn.GroupNorm(32, cout),
                         nn.ReLU(inplace=True))


class FPNSegHead(nn.Module):
    def __init__(self, in_channels, reductions, fpn_dim, head_dim, num_classes):
        super().__init__()
        self.lateral = nn.ModuleList([nn.Conv2d(c, fpn_dim, 1) for c in in_channels])
        self.smooth = nn.ModuleList([nn.Conv2d(fpn_dim, fpn_dim, 3, padding=1) for _ in in_channels])
        # each level is upsampled to stride 4 by (log2(r) - 2) conv+2x stages
        self.scale_heads = nn.ModuleList()
        for r in reductions:
            n_up = max(int(r).bit_length() - 3, 0)
            layers = [conv_gn_relu(fpn_dim, head_dim)]
            for _ in range(n_up):
                layers += [nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False),
                           conv_gn_relu(head_dim, head_dim)]
            self.scale_heads.append(nn.Sequential(*layers))
        self.classifier = nn.Conv2d(head_dim, num_classes, 1)

    def forward(self, feats):
        lat = [l(f) for l, f in zip(self.lateral, feats)]
        for i in range(len(lat) - 1, 0, -1):
            lat[i - 1] = lat[i - 1] + F.interpolate(lat[i], size=lat[i - 1].shape[-2:], mode="nearest")
        outs = [s(l) for s, l in zip(self.smooth, lat)]
        fused = sum(h(o) for h, o in zip(self.scale_heads, outs))
        return self.classifier(fused)


class Segmenter(nn.Module):
    def __init__(self, cfg: SegConfig):
        super().__init__()
        self.backbone = timm.create_model(cfg.backbone, pretrained=False, features_only=True,
                                          out_indices=cfg.out_indices, drop_path_rate=cfg.drop_path)
        chans = self.backbone.feature_info.channels()
        reds = self.backbone.feature_info.reduction()
        self.decode_head = FPNSegHead(chans, reds, cfg.fpn_dim, cfg.head_dim, cfg.num_classes)

    def forward(self, x):
        feats = self.backbone(x)
        logits = self.decode_head(feats)
        return F.interpolate(logits, size=x.shape[-2:], mode="bilinear", align_corners=False)


class CityscapesStub(Dataset):
    def __init__(self, n, crop, num_classes, ignore_index):
        self.n, self.crop, self.num_classes, self.ignore = n, crop, num_classes, ignore_index

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        img = torch.randn(3, *self.crop)
        mask = torch.randint(0, self.num_classes, self.crop)
        mask[:16] = self.ignore                     # a band of void pixels
        return img, mask


def main(cfg: SegConfig = SegConfig()):
    device = torch.device("cuda")
    model = Segmenter(cfg).to(device)
    print("feature channels:", model.backbone.feature_info.channels())

    loader = DataLoader(CityscapesStub(cfg.batch_size * cfg.max_iters, cfg.crop, cfg.num_classes, cfg.ignore_index),
                        batch_size=cfg.batch_size, shuffle=True, num_workers=cfg.workers, drop_last=True)

    optimizer = torch.optim.AdamW([
        {"params": model.backbone.parameters(), "lr": cfg.lr * cfg.backbone_lr_mult},
        {"params": model.decode_head.parameters(), "lr": cfg.lr},
    ], weight_decay=cfg.weight_decay)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda it: (1 - it / cfg.max_iters) ** cfg.power)
    scaler = torch.amp.GradScaler("cuda", enabled=cfg.amp)
    criterion = nn.CrossEntropyLoss(ignore_index=cfg.ignore_index)

    it = 0
    model.train()
    while it < cfg.max_iters:
        for img, mask in loader:
            img, mask = img.to(device, non_blocking=True), mask.to(device, non_blocking=True)
            with torch.autocast("cuda", dtype=torch.float16, enabled=cfg.amp):
                logits = model(img)
                loss = criterion(logits, mask)
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()
            it += 1
            print(f"iter {it}/{cfg.max_iters} loss {loss.item():.4f} scale {scaler.get_scale():.0f}")
            if it >= cfg.max_iters:
                break
    print(f"max mem {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
