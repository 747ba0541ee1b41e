"""Residual U-Net for tile segmentation. Settings: DEFAULTS below, deep-merged with the YAML named by --config
(configs/seg_resunet.yaml next to this file), then with --set key.sub=value overrides."""
import argparse
import copy
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import yaml
from torch.utils.data import DataLoader, Dataset

HERE = os.path.dirname(os.path.abspath(__file__))

DEFAULTS = {
    "model": {"name": "unet", "in_channels": 3, "base_channels": 32, "depth": 4, "num_classes": 2},
    "data": {"tile_size": 256, "batch_size": 16, "num_workers": 2},
    "optim": {"name": "adam", "lr": 1e-3, "weight_decay": 0.0},
    "train": {"amp": None, "max_steps": 100, "log_every": 2},
}


def deep_merge(base, override):
    out = copy.deepcopy(base)
    for k, v in (override or {}).items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = deep_merge(out[k], v)
        else:
            out[k] = v
    return out


def apply_overrides(cfg, pairs):
    for pair in pairs:
        key, value = pair.split("=", 1)
        node = cfg
        *parents, leaf = key.split(".")
        for p in parents:
            node = node.setdefault(p, {})
        node[leaf] = yaml.safe_load(value)
    return cfg


class ResBlock(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.skip = nn.Conv2d(cin, cout, 1, bias=False) if cin != cout else nn.Identity()

    def forward(self, x):
        h = F.relu(self.bn1(self.conv1(x)))
        h = self.bn2(self.conv2(h))
        return F.relu(h + self.skip(x))


class ResUNet(nn.Module):
    def __init__(self, in_channels, base_channels, depth, num_classes):
        super().__init__()
        chs = [base_channels * 2 ** i for i in range(depth)]
        self.stem = ResBlock(in_channels, chs[0])
        self.down = nn.ModuleList([ResBlock(chs[i], chs[i + 1]) for i in range(depth - 1)])
        self.up = nn.ModuleList([nn.ConvTranspose2d(chs[i + 1], chs[i], 2, stride=2) for i in reversed(range(depth - 1))])
        self.dec = nn.ModuleList([ResBlock(chs[i] * 2, chs[i]) for i in reversed(range(depth - 1))])
        self.head = nn.Conv2d(chs[0], num_classes, 1)

    def forward(self, x):
        skips = []
        x = self.stem(x)
        for block in self.down:
            skips.append(x)
            x = block(F.max_pool2d(x, 2))
        for up, dec in zip(self.up, self.dec):
            x = dec(torch.cat([up(x), skips.pop()], dim=1))
        return self.head(x)


MODELS = {"resunet": ResUNet}


class Tiles(Dataset):
    def __init__(self, n, size, in_ch, n_cls):
        self.n, self.size, self.in_ch, self.n_cls = n, size, in_ch, n_cls

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.randn(self.in_ch, self.size, self.size), torch.randint(0, self.n_cls, (self.size, self.size))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default=os.path.join(HERE, "configs", "seg_resunet.yaml"))
    ap.add_argument("--set", nargs="*", default=[], dest="overrides")
    args = ap.parse_args()
    with open(args.config) as fh:
        cfg = deep_merge(DEFAULTS, yaml.safe_load(fh))
    cfg = apply_overrides(cfg, args.overrides)
    print(yaml.safe_dump(cfg, sort_keys=False))

    mcfg = dict(cfg["model"])
    model = MODELS[mcfg.pop("name")](**mcfg).cuda()
    d = cfg["data"]
    loader = DataLoader(Tiles(d["batch_size"] * cfg["train"]["max_steps"], d["tile_size"], cfg["model"]["in_channels"],
                              cfg["model"]["num_classes"]), batch_size=d["batch_size"], num_workers=d["num_workers"])
    o = cfg["optim"]
    opt_cls = {"adam": torch.optim.Adam, "adamw": torch.optim.AdamW, "sgd": torch.optim.SGD}[o["name"]]
    optimizer = opt_cls(model.parameters(), lr=o["lr"], weight_decay=o["weight_decay"])
    amp_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, None: None}[cfg["train"]["amp"]]

    model.train()
    for step, (x, y) in enumerate(loader):
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        with torch.autocast("cuda", dtype=amp_dtype or torch.float32, enabled=amp_dtype is not None):
            loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if step % cfg["train"]["log_every"] == 0:
            print(f"step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
