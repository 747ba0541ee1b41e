"""NYUv2-style multi-task dense prediction (segmentation + depth + surface normals) with PCGrad.

PCGrad needs each task's gradient separately: one backward per task with retain_graph=True, the
gradients flattened, conflicting components projected away, then written back before optimizer.step().
"""
import random

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from torchvision import models

IMG_H, IMG_W = 288, 384
BATCH = 8
NUM_SEG = 13
STEPS = 4

DECODERS = {}


def register(name):
    def deco(cls):
        DECODERS[name] = cls
        return cls
    return deco


class _Head(nn.Module):
    out_channels = 1

    def __init__(self, in_ch=2048, mid=256):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(in_ch, mid, 3, padding=1, bias=False), nn.BatchNorm2d(mid), nn.ReLU(inplace=True),
            nn.Conv2d(mid, mid, 3, padding=2, dilation=2, bias=False), nn.BatchNorm2d(mid), nn.ReLU(inplace=True),
            nn.Conv2d(mid, self.out_channels, 1),
        )

    def forward(self, feat, size):
        return F.interpolate(self.body(feat), size=size, mode="bilinear", align_corners=False)


@register("seg")
class SegHead(_Head):
    out_channels = NUM_SEG


@register("depth")
class DepthHead(_Head):
    out_channels = 1


@register("normal")
class NormalHead(_Head):
    out_channels = 3

    def forward(self, feat, size):
        return F.normalize(super().forward(feat, size), dim=1)


class MTLNet(nn.Module):
    def __init__(self, tasks):
        super().__init__()
        r = models.resnet50(weights=None, replace_stride_with_dilation=[False, True, True])
        self.encoder = nn.Sequential(*list(r.children())[:-2])  # output stride 8
        self.decoders = nn.ModuleDict({t: DECODERS[t]() for t in tasks})

    def forward(self, x):
        feat = self.encoder(x)
        return {t: d(feat, x.shape[-2:]) for t, d in self.decoders.items()}


class FakeNYU(Dataset):
    def __len__(self):
        return BATCH * STEPS

    def __getitem__(self, i):
        img = torch.randn(3, IMG_H, IMG_W)
        seg = torch.randint(-1, NUM_SEG, (IMG_H, IMG_W))
        depth = torch.rand(1, IMG_H, IMG_W) * 10
        normal = F.normalize(torch.randn(3, IMG_H, IMG_W), dim=0)
        return img, seg, depth, normal


def task_losses(out, seg, depth, normal):
    valid = (depth > 0).float()
    return [
        F.cross_entropy(out["seg"], seg, ignore_index=-1),
        (torch.abs(out["depth"] - depth) * valid).sum() / valid.sum().clamp(min=1),
        1 - (out["normal"] * normal).sum(1).mean(),
    ]


class PCGrad:
    def __init__(self, optimizer):
        self.opt = optimizer

    def _params(self):
        return [p for g in self.opt.param_groups for p in g["params"]]

    def _flat_grad(self):
        grads, has = [], []
        for p in self._params():
            if p.grad is None:
                grads.append(torch.zeros_like(p).flatten())
                has.append(torch.zeros_like(p, dtype=torch.bool).flatten())
            else:
                grads.append(p.grad.detach().clone().flatten())
                has.append(torch.ones_like(p, dtype=torch.bool).flatten())
        return torch.cat(grads), torch.cat(has)

    def pc_backward(self, objectives):
        grads, has = [], []
        for i, obj in enumerate(objectives):
            self.opt.zero_grad(set_to_none=False)
            obj.backward(retain_graph=i < len(objectives) - 1)
            g, h = self._flat_grad()
            grads.append(g)
            has.append(h)
        shared = torch.stack(has).prod(0).bool()
        pc = [g.clone() for g in grads]
        for g_i in pc:
            order = list(range(len(grads)))
            random.shuffle(order)
            for j in order:
                dot = torch.dot(g_i, grads[j])
                if dot < 0:
                    g_i -= dot * grads[j] / (grads[j].norm() ** 2 + 1e-12)
        merged = torch.zeros_like(grads[0])
        stacked = torch.stack(pc)
        merged[shared] = stacked[:, shared].mean(0)
        merged[~shared] = stacked[:, ~shared].sum(0)
        offset = 0
        for p in self._params():
            n = p.numel()
            p.grad = merged[offset:offset + n].view_as(p).clone()
            offset += n

    def step(self):
        self.opt.step()


def main():
    device = "cuda"
    model = MTLNet(["seg", "depth", "normal"]).to(device)
    optimizer = PCGrad(torch.optim.Adam(model.parameters(), lr=1e-4))
    loader = DataLoader(FakeNYU(), batch_size=BATCH, shuffle=True, num_workers=4, drop_last=True)

    model.train()
    for step, (img, seg, depth, normal) in enumerate(loader):
        img, seg, depth, normal = (t.to(device) for t in (img, seg, depth, normal))
        out = model(img)
        losses = task_losses(out, seg, depth, normal)
        optimizer.pc_backward(losses)
        optimizer.step()
        print(f"step {step} " + " ".join(f"{n}={l.item():.3f}" for n, l in zip(["seg", "depth", "normal"], losses)))


if __name__ == "__main__":
    main()
