"""Hydra-like configuration without Hydra: a base dict, config *groups* (model=..., optim=...) selected on the
command line, and dotted overrides (train.batch_size=48), all merged by hand.

    python train_hydra_style_groups.py model=efficientnet_b4 optim=adamw train.batch_size=32
"""
import copy
import sys

import torch
import torch.nn as nn
import torchvision
from torch.utils.data import DataLoader, Dataset

BASE = {
    "defaults": {"model": "efficientnet_b4", "optim": "adamw"},
    "train": {"batch_size": 16, "image_size": 224, "steps": 4, "amp": "bf16", "clip": 2.0},
    "data": {"num_classes": 196, "workers": 4},
}

GROUPS = {
    "model": {
        "resnet50": {"model": {"name": "resnet50", "kwargs": {}}, "train": {"image_size": 224}},
        "efficientnet_b4": {"model": {"name": "efficientnet_b4", "kwargs": {"stochastic_depth_prob": 0.2}},
                            "train": {"image_size": 380, "batch_size": 32}},
        "convnext_small": {"model": {"name": "convnext_small", "kwargs": {"stochastic_depth_prob": 0.4}},
                           "train": {"image_size": 224, "batch_size": 64}},
    },
    "optim": {
        "sgd": {"optim": {"name": "SGD", "lr": 0.1, "momentum": 0.9, "weight_decay": 1e-4}},
        "adamw": {"optim": {"name": "AdamW", "lr": 1e-3, "weight_decay": 0.05}},
    },
}


def deep_merge(base, override):
    out = copy.deepcopy(base)
    for k, v in override.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = deep_merge(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


def parse_value(s):
    for cast in (int, float):
        try:
            return cast(s)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(s.lower(), s)


def compose(argv):
    choices = dict(BASE["defaults"])
    overrides = []
    for arg in argv:
        key, _, val = arg.partition("=")
        if key in GROUPS:
            choices[key] = val
        else:
            overrides.append((key, parse_value(val)))
    cfg = copy.deepcopy(BASE)
    for group, choice in choices.items():
        cfg = deep_merge(cfg, GROUPS[group][choice])
    for dotted, val in overrides:
        node = cfg
        *parents, leaf = dotted.split(".")
        for p in parents:
            node = node.setdefault(p, {})
        node[leaf] = val
    return cfg


class Cars(Dataset):
    def __init__(self, n, size, num_classes):
        self.n, self.size, self.nc = n, size, num_classes

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.randn(3, self.size, self.size), i % self.nc


def main(argv):
    cfg = compose(argv)
    print(cfg)
    mcfg, ocfg, tcfg = cfg["model"], cfg["optim"], cfg["train"]
    model = torchvision.models.get_model(mcfg["name"], num_classes=cfg["data"]["num_classes"], **mcfg["kwargs"])
    model.cuda()
    opt_kwargs = {k: v for k, v in ocfg.items() if k != "name"}
    optimizer = getattr(torch.optim, ocfg["name"])(model.parameters(), **opt_kwargs)
    amp_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(tcfg["amp"])
    loader = DataLoader(Cars(tcfg["batch_size"] * tcfg["steps"], tcfg["image_size"], cfg["data"]["num_classes"]),
                        batch_size=tcfg["batch_size"], shuffle=True, num_workers=cfg["data"]["workers"])
    crit = nn.CrossEntropyLoss(label_smoothing=0.1)
    model.train()
    for step, (x, y) in enumerate(loader):
        x, y = x.cuda(), y.cuda()
        with torch.autocast("cuda", dtype=amp_dtype, enabled=amp_dtype is not None):
            loss = crit(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), tcfg["clip"])
        optimizer.step()
        print(f"step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    main(sys.argv[1:])
