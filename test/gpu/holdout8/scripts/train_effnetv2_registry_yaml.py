"""EfficientNetV2-style classifier assembled from a YAML stage table through a block registry.

    python train_effnetv2_registry_yaml.py --config configs/effnetv2_s_custom.yaml

BLOCK_REGISTRY maps the block names of the YAML to classes; the activation is getattr(nn, name) and the norm
layer is functools.partial(nn.BatchNorm2d, **yaml["batchnorm"]). fp16 autocast + GradScaler, channels_last,
RMSprop as in the EfficientNet recipes.
"""
import argparse
import os
import time
from functools import partial

import torch
import torch.nn as nn
import torch.nn.functional as F
import yaml
from torch.utils.data import DataLoader, Dataset

BLOCK_REGISTRY = {}


def register_block(name):
    def deco(cls):
        BLOCK_REGISTRY[name] = cls
        return cls
    return deco


def conv_norm_act(cin, cout, k, stride, norm_layer, act_layer, groups=1, act=True):
    layers = [nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False), norm_layer(cout)]
    if act:
        layers.append(act_layer(inplace=True))
    return nn.Sequential(*layers)


class SqueezeExcite(nn.Module):
    def __init__(self, channels, reduced, act_layer):
        super().__init__()
        self.fc1 = nn.Conv2d(channels, reduced, 1)
        self.act = act_layer(inplace=True)
        self.fc2 = nn.Conv2d(reduced, channels, 1)

    def forward(self, x):
        s = x.mean((2, 3), keepdim=True)
        return x * torch.sigmoid(self.fc2(self.act(self.fc1(s))))


@register_block("mbconv")
class MBConv(nn.Module):
    def __init__(self, cin, cout, stride, expand, se_ratio, norm_layer, act_layer):
        super().__init__()
        mid = cin * expand
        self.use_res = stride == 1 and cin == cout
        self.expand = conv_norm_act(cin, mid, 1, 1, norm_layer, act_layer)
        self.dw = conv_norm_act(mid, mid, 3, stride, norm_layer, act_layer, groups=mid)
        self.se = SqueezeExcite(mid, max(1, int(cin * se_ratio)), act_layer) if se_ratio > 0 else nn.Identity()
        self.project = conv_norm_act(mid, cout, 1, 1, norm_layer, act_layer, act=False)

    def forward(self, x):
        out = self.project(self.se(self.dw(self.expand(x))))
        return x + out if self.use_res else out


@register_block("fused_mbconv")
class FusedMBConv(nn.Module):
    def __init__(self, cin, cout, stride, expand, se_ratio, norm_layer, act_layer):
        super().__init__()
        mid = cin * expand
        self.use_res = stride == 1 and cin == cout
        if expand == 1:
            self.fused = conv_norm_act(cin, cout, 3, stride, norm_layer, act_layer)
            self.project = nn.Identity()
        else:
            self.fused = conv_norm_act(cin, mid, 3, stride, norm_layer, act_layer)
            self.project = conv_norm_act(mid, cout, 1, 1, norm_layer, act_layer, act=False)

    def forward(self, x):
        out = self.project(self.fused(x))
        return x + out if self.use_res else out


class EffNetV2(nn.Module):
    def __init__(self, mcfg):
        super().__init__()
        act_layer = getattr(nn, mcfg["activation"])
        norm_layer = partial(nn.BatchNorm2d, **mcfg["batchnorm"])
        c = mcfg["stem_channels"]
        self.stem = conv_norm_act(3, c, 3, 2, norm_layer, act_layer)
        blocks = []
        for block_name, expand, cout, stride, repeats, se_ratio in mcfg["stages"]:
            block_cls = BLOCK_REGISTRY[block_name]
            for i in range(repeats):
                blocks.append(block_cls(c, cout, stride if i == 0 else 1, expand, se_ratio, norm_layer, act_layer))
                c = cout
        self.blocks = nn.Sequential(*blocks)
        self.head = conv_norm_act(c, mcfg["head_channels"], 1, 1, norm_layer, act_layer)
        self.dropout = nn.Dropout(mcfg["dropout"])
        self.classifier = nn.Linear(mcfg["head_channels"], mcfg["num_classes"])

    def forward(self, x):
        x = self.head(self.blocks(self.stem(x)))
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.classifier(self.dropout(x))


class RandomImages(Dataset):
    def __init__(self, n, size, num_classes):
        self.n, self.size, self.num_classes = n, size, num_classes

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.randn(3, self.size, self.size), torch.randint(self.num_classes, ()).item()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                          "configs", "effnetv2_s_custom.yaml"))
    args = parser.parse_args()
    with open(args.config) as f:
        cfg = yaml.safe_load(f)
    mcfg, dcfg, tcfg = cfg["model"], cfg["data"], cfg["train"]

    device = torch.device("cuda")
    model = EffNetV2(mcfg).to(device)
    if tcfg.get("channels_last"):
        model = model.to(memory_format=torch.channels_last)
    print(f"{mcfg['name']}: {sum(p.numel() for p in model.parameters()) / 1e6:.1f}M params, "
          f"{len(model.blocks)} blocks from {sorted(BLOCK_REGISTRY)}")

    loader = DataLoader(RandomImages(dcfg["batch_size"] * tcfg["steps"], dcfg["image_size"], mcfg["num_classes"]),
                        batch_size=dcfg["batch_size"], shuffle=True, num_workers=dcfg["workers"],
                        pin_memory=True, drop_last=True)
    optimizer = torch.optim.RMSprop(model.parameters(), lr=tcfg["lr"], alpha=0.9, eps=1e-3,
                                    momentum=tcfg["momentum"], weight_decay=tcfg["weight_decay"])
    use_fp16 = tcfg.get("amp") == "fp16"
    scaler = torch.amp.GradScaler("cuda", enabled=use_fp16)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)

    model.train()
    t0 = time.time()
    for step, (images, targets) in enumerate(loader):
        images = images.to(device, non_blocking=True)
        if tcfg.get("channels_last"):
            images = images.contiguous(memory_format=torch.channels_last)
        targets = targets.to(device, non_blocking=True)
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_fp16):
            loss = criterion(model(images), targets)
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        print(f"step {step} loss {loss.item():.4f} scale {scaler.get_scale():.0f} ({time.time() - t0:.1f}s)")
    print(f"peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
