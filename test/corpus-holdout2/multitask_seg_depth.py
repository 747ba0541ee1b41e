"""Joint semantic segmentation + depth on NYUv2 with a shared encoder.

The two task losses are backpropagated separately (so that we can log per-task gradient norms),
which needs retain_graph on the first backward.
"""
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader


@dataclass
class TrainConfig:
    batch_size: int = 8
    epochs: int = 100
    lr: float = 1e-4
    num_classes: int = 13
    aux_weight: float = 0.4
    data_root: str = "data/nyuv2"


def conv_bn(c_in, c_out, stride=1):
    return nn.Sequential(nn.Conv2d(c_in, c_out, 3, stride, 1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU(inplace=True))


class SharedEncoder(nn.Module):
    def __init__(self, widths=(32, 64, 128, 256)):
        super().__init__()
        layers = []
        c = 3
        for w in widths:
            layers += [conv_bn(c, w, stride=2), conv_bn(w, w)]
            c = w
        self.body = nn.Sequential(*layers)
        self.out_channels = c

    def forward(self, x):
        return self.body(x)


class MultiTaskNet(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.encoder = SharedEncoder()
        c = self.encoder.out_channels
        self.seg_head = nn.Conv2d(c, num_classes, 1)
        self.aux_heads = nn.ModuleList([nn.Conv2d(c, num_classes, 1) for _ in range(2)])
        self.depth_head = nn.Sequential(conv_bn(c, 64), nn.Conv2d(64, 1, 1))

    def forward(self, x):
        h, w = x.shape[-2:]
        feats = self.encoder(x)
        up = lambda t: F.interpolate(t, size=(h, w), mode="bilinear", align_corners=False)
        seg = up(self.seg_head(feats))
        aux = [up(head(feats)) for head in self.aux_heads]
        depth = up(self.depth_head(feats))
        return seg, aux, depth


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    inter = torch.zeros(13, device=device)
    union = torch.zeros(13, device=device)
    abs_err = 0.0
    n = 0
    for img, mask, depth in loader:
        img, mask, depth = img.to(device), mask.to(device), depth.to(device)
        seg, _, pred_depth = model(img)
        pred = seg.argmax(1)
        for c in range(13):
            inter[c] += ((pred == c) & (mask == c)).sum()
            union[c] += ((pred == c) | (mask == c)).sum()
        abs_err += (pred_depth - depth).abs().mean().item()
        n += 1
    model.train()
    return (inter / union.clamp(min=1)).mean().item(), abs_err / n


def train(cfg: TrainConfig, train_set, val_set):
    device = torch.device("cuda")
    model = MultiTaskNet(cfg.num_classes).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    train_loader = DataLoader(train_set, batch_size=cfg.batch_size, shuffle=True, num_workers=4, drop_last=True)
    val_loader = DataLoader(val_set, batch_size=cfg.batch_size)
    shared = model.encoder.body[-1][0].weight

    for epoch in range(cfg.epochs):
        for step, (img, mask, depth) in enumerate(train_loader):
            img, mask, depth = img.to(device), mask.to(device), depth.to(device)
            seg, aux, pred_depth = model(img)

            seg_loss = F.cross_entropy(seg, mask, ignore_index=255)
            aux_loss = sum(F.cross_entropy(aux_logits, mask, ignore_index=255) for aux_logits in aux)
            seg_loss = seg_loss + cfg.aux_weight * aux_loss
            depth_loss = F.l1_loss(pred_depth, depth)

            g_seg = torch.autograd.grad(seg_loss, shared, retain_graph=True)[0]
            g_depth = torch.autograd.grad(depth_loss, shared, retain_graph=True)[0]

            optimizer.zero_grad()
            seg_loss.backward(retain_graph=True)
            depth_loss.backward()
            optimizer.step()

            if step % 100 == 0:
                print(f"ep {epoch} step {step}: seg {seg_loss.item():.3f} depth {depth_loss.item():.3f} "
                      f"|g_seg| {g_seg.norm().item():.2e} |g_depth| {g_depth.norm().item():.2e}")
        miou, err = evaluate(model, val_loader, device)
        print(f"epoch {epoch}: mIoU {miou:.3f} abs-rel {err:.3f}")
    return model
