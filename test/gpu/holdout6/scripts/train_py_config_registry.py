"""mmsegmentation-style training: the config is a Python file (configs/deeplab_lite.py) of dicts with `type`
keys, built recursively through registries (BACKBONES / HEADS / SEGMENTORS)."""
import argparse
import copy
import os
import runpy

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from torch.utils.data import DataLoader, Dataset


class Registry:
    def __init__(self, name):
        self.name, self._modules = name, {}

    def register_module(self, cls=None):
        def _reg(c):
            self._modules[c.__name__] = c
            return c
        return _reg(cls) if cls is not None else _reg

    def build(self, cfg, **default_args):
        cfg = copy.deepcopy(cfg)
        cls = self._modules[cfg.pop("type")]
        for k, v in default_args.items():
            cfg.setdefault(k, v)
        return cls(**cfg)


BACKBONES, HEADS, SEGMENTORS = Registry("backbone"), Registry("head"), Registry("segmentor")


@BACKBONES.register_module()
class ResNetBackbone(nn.Module):
    def __init__(self, depth=50, out_stride=8):
        super().__init__()
        dil = {8: [False, True, True], 16: [False, False, True]}[out_stride]
        net = getattr(torchvision.models, f"resnet{depth}")(weights=None, replace_stride_with_dilation=dil)
        self.stem = nn.Sequential(net.conv1, net.bn1, net.relu, net.maxpool)
        self.layer1, self.layer2, self.layer3, self.layer4 = net.layer1, net.layer2, net.layer3, net.layer4

    def forward(self, x):
        x = self.layer2(self.layer1(self.stem(x)))
        c3 = self.layer3(x)
        return c3, self.layer4(c3)


def conv_bn_relu(cin, cout, k=3, d=1):
    return nn.Sequential(nn.Conv2d(cin, cout, k, padding=d * (k // 2), dilation=d, bias=False),
                         nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


@HEADS.register_module()
class ASPPHead(nn.Module):
    def __init__(self, in_channels, channels, dilations, num_classes, dropout=0.1, loss_weight=1.0):
        super().__init__()
        self.image_pool = nn.Sequential(nn.AdaptiveAvgPool2d(1), conv_bn_relu(in_channels, channels, 1))
        self.branches = nn.ModuleList([conv_bn_relu(in_channels, channels, 1 if d == 1 else 3, d) for d in dilations])
        self.bottleneck = conv_bn_relu(channels * (len(dilations) + 1), channels)
        self.cls = nn.Sequential(nn.Dropout2d(dropout), nn.Conv2d(channels, num_classes, 1))
        self.loss_weight = loss_weight

    def forward(self, x):
        pooled = F.interpolate(self.image_pool(x), size=x.shape[2:], mode="bilinear", align_corners=False)
        return self.cls(self.bottleneck(torch.cat([pooled] + [b(x) for b in self.branches], dim=1)))


@HEADS.register_module()
class FCNHead(nn.Module):
    def __init__(self, in_channels, channels, num_classes, loss_weight=1.0):
        super().__init__()
        self.convs = conv_bn_relu(in_channels, channels)
        self.cls = nn.Conv2d(channels, num_classes, 1)
        self.loss_weight = loss_weight

    def forward(self, x):
        return self.cls(self.convs(x))


@SEGMENTORS.register_module()
class EncoderDecoder(nn.Module):
    def __init__(self, backbone, decode_head, auxiliary_head=None):
        super().__init__()
        self.backbone = BACKBONES.build(backbone)
        self.decode_head = HEADS.build(decode_head)
        self.auxiliary_head = HEADS.build(auxiliary_head) if auxiliary_head else None

    def forward_train(self, img, gt):
        c3, c4 = self.backbone(img)
        losses = {}
        out = F.interpolate(self.decode_head(c4), size=img.shape[2:], mode="bilinear", align_corners=False)
        losses["decode.loss_ce"] = F.cross_entropy(out, gt, ignore_index=255) * self.decode_head.loss_weight
        if self.auxiliary_head is not None:
            aux = F.interpolate(self.auxiliary_head(c3), size=img.shape[2:], mode="bilinear", align_corners=False)
            losses["aux.loss_ce"] = F.cross_entropy(aux, gt, ignore_index=255) * self.auxiliary_head.loss_weight
        return losses


class CityscapesLike(Dataset):
    def __init__(self, n, crop, num_classes):
        self.n, self.crop, self.num_classes = n, crop, num_classes

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        h, w = self.crop
        return torch.randn(3, h, w), torch.randint(0, self.num_classes, (h, w))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("config", nargs="?",
                    default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "configs", "deeplab_lite.py"))
    args = ap.parse_args()
    cfg = runpy.run_path(args.config)

    model = SEGMENTORS.build(cfg["model"]).cuda()
    ocfg = dict(cfg["optimizer"])
    optimizer = getattr(torch.optim, ocfg.pop("type"))(model.parameters(), **ocfg)
    max_iters = cfg["runner"]["max_iters"]
    scheduler = torch.optim.lr_scheduler.PolynomialLR(optimizer, total_iters=max_iters, power=0.9)
    scaler = torch.amp.GradScaler("cuda", init_scale=cfg["fp16"]["loss_scale"]) if cfg.get("fp16") else None
    d = cfg["data"]
    loader = DataLoader(CityscapesLike(d["samples_per_gpu"] * max_iters, d["crop_size"], cfg["num_classes"]),
                        batch_size=d["samples_per_gpu"], num_workers=d["workers_per_gpu"], shuffle=True)

    model.train()
    for it, (img, gt) in enumerate(loader):
        img, gt = img.cuda(), gt.cuda()
        with torch.autocast("cuda", dtype=torch.float16, enabled=scaler is not None):
            losses = model.forward_train(img, gt)
            loss = sum(losses.values())
        optimizer.zero_grad()
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        else:
            loss.backward()
            optimizer.step()
        scheduler.step()
        print(f"Iter [{it + 1}/{max_iters}] " + ", ".join(f"{k}: {v.item():.4f}" for k, v in losses.items()))


if __name__ == "__main__":
    main()
