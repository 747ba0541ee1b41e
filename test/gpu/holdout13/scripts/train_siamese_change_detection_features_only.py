"""Building change detection on bi-temporal image pairs (LEVIR-CD style).

Siamese encoder: one timm backbone created with features_only=True, shared by both dates; the absolute
difference of each pyramid level goes through a small FPN decoder that predicts the change mask.
"""
import argparse
import functools
import os
import shlex

import timm
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

parser = argparse.ArgumentParser()
parser.add_argument("--backbone", default="resnet18")
parser.add_argument("--img", type=int, default=256)
parser.add_argument("-b", "--batch", type=int, default=16, dest="batch_size")
parser.add_argument("--dec-ch", type=int, default=128, dest="dec_ch")
parser.add_argument("--steps", type=int, default=5)
parser.add_argument("--lr", type=float, default=1e-3)
# the run we kept; override with CD_ARGS="..."
args = parser.parse_args(shlex.split(os.environ.get("CD_ARGS", "--backbone resnet34 --img 512 -b 32")))
print(args)

make_encoder = functools.partial(timm.create_model, pretrained=False, features_only=True, out_indices=(1, 2, 3, 4))


class SiameseFPN(nn.Module):
    def __init__(self, backbone, dec_ch):
        super().__init__()
        self.encoder = make_encoder(backbone)
        chs = self.encoder.feature_info.channels()
        self.lateral = nn.ModuleList([nn.Conv2d(c, dec_ch, 1) for c in chs])
        self.smooth = nn.ModuleList([
            nn.Sequential(nn.Conv2d(dec_ch, dec_ch, 3, padding=1, bias=False), nn.BatchNorm2d(dec_ch), nn.ReLU())
            for _ in chs])
        self.head = nn.Sequential(nn.Conv2d(dec_ch, dec_ch, 3, padding=1), nn.ReLU(), nn.Conv2d(dec_ch, 1, 1))

    def forward(self, img_a, img_b):
        n = img_a.shape[0]
        feats = self.encoder(torch.cat([img_a, img_b], dim=0))     # shared weights, one pass
        diffs = [torch.abs(f[:n] - f[n:]) for f in feats]
        x = None
        for i in reversed(range(len(diffs))):
            lat = self.lateral[i](diffs[i])
            if x is not None:
                lat = lat + F.interpolate(x, size=lat.shape[-2:], mode="nearest")
            x = self.smooth[i](lat)
        out = self.head(x)                                          # stride 4
        return F.interpolate(out, size=img_a.shape[-2:], mode="bilinear", align_corners=False)


class PairSet(Dataset):
    def __init__(self, n, size):
        self.n, self.size = n, size

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        a = torch.randn(3, self.size, self.size)
        b = a + 0.3 * torch.randn(3, self.size, self.size)
        m = (torch.rand(1, self.size // 16, self.size // 16) > 0.9).float()
        m = F.interpolate(m[None], size=(self.size, self.size), mode="nearest")[0]
        return a, b, m


model = SiameseFPN(args.backbone, args.dec_ch).cuda()
opt = torch.optim.Adam(model.parameters(), lr=args.lr)
scaler = torch.amp.GradScaler("cuda")
loader = DataLoader(PairSet(args.batch_size * args.steps, args.img), batch_size=args.batch_size, shuffle=True,
                    num_workers=4)
pos_weight = torch.tensor([5.0], device="cuda")

for step, (a, b, m) in enumerate(loader):
    a, b, m = a.cuda(), b.cuda(), m.cuda()
    with torch.autocast("cuda", dtype=torch.float16):
        logits = model(a, b)
        loss = F.binary_cross_entropy_with_logits(logits, m, pos_weight=pos_weight)
    opt.zero_grad()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    with torch.no_grad():
        pred = logits > 0
        iou = (pred & (m > 0)).sum() / ((pred | (m > 0)).sum() + 1)
    print(f"step {step}: loss {loss.item():.4f} IoU {iou.item():.3f}")

print(f"peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")
