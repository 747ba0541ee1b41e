"""A CNN whose architecture is a list of layers in configs/lazy_cnn.yaml, built from a registry of layer
constructors; all layers are lazy (nn.LazyConv2d / LazyBatchNorm2d / LazyLinear) so the YAML never states
input channels. A dry forward materialises the parameters before the optimizer is built."""
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import yaml
from torch.utils.data import DataLoader, Dataset

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "configs", "lazy_cnn.yaml")) as f:
    CFG = yaml.safe_load(f)


def conv(c_out, k, s, act):
    return nn.Sequential(nn.LazyConv2d(c_out, k, s, padding=k // 2, bias=False), nn.LazyBatchNorm2d(), act())


class DWSep(nn.Module):
    """Depthwise-separable residual block (channels known only after the first call)."""

    def __init__(self, c_out, k, s, act):
        super().__init__()
        self.c_out, self.k, self.s = c_out, k, s
        self.dw = nn.LazyConv2d(c_out, k, s, padding=k // 2, groups=c_out, bias=False)
        self.bn1 = nn.LazyBatchNorm2d()
        self.pw = nn.LazyConv2d(c_out, 1, bias=False)
        self.bn2 = nn.LazyBatchNorm2d()
        self.act = act()

    def forward(self, x):
        y = self.act(self.bn1(self.dw(x)))
        y = self.bn2(self.pw(y))
        return self.act(y + x) if y.shape == x.shape else self.act(y)


LAYER_REGISTRY = {
    "conv": lambda args, act: conv(*args, act),
    "dwsep": lambda args, act: DWSep(*args, act),
    "pool": lambda args, act: nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten()),
    "dropout": lambda args, act: nn.Dropout(*args),
    "linear": lambda args, act: nn.LazyLinear(*args),
}


def build_model(cfg):
    act = getattr(nn, cfg["act"])
    layers = []
    for entry in cfg["layers"]:
        kind, *args = entry
        args = [cfg[a] if isinstance(a, str) else a for a in args]     # allow references like num_classes
        layers.append(LAYER_REGISTRY[kind](args, act))
    return nn.Sequential(*layers)


class RandomImages(Dataset):
    def __init__(self, n, size, k):
        self.n, self.size, self.k = n, size, k

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.randn(3, self.size, self.size), torch.randint(self.k, ()).item()


def main():
    tc = CFG["train"]
    device = torch.device("cuda")
    model = build_model(CFG).to(device)
    model(torch.zeros(2, 3, CFG["input_size"], CFG["input_size"], device=device))   # materialise lazy params
    model = model.to(memory_format=torch.channels_last)
    print(CFG["name"], sum(p.numel() for p in model.parameters()), "params")
    opt = torch.optim.SGD(model.parameters(), lr=tc["lr"], momentum=tc["momentum"], weight_decay=tc["weight_decay"],
                          nesterov=True)
    loader = DataLoader(RandomImages(tc["batch_size"] * tc["steps"], CFG["input_size"], CFG["num_classes"]),
                        batch_size=tc["batch_size"], shuffle=True, num_workers=4, drop_last=True)
    model.train()
    for step, (x, y) in enumerate(loader):
        x = x.to(device).contiguous(memory_format=torch.channels_last)
        y = y.to(device)
        loss = F.cross_entropy(model(x), y, label_smoothing=0.1)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"step {step} loss {loss.item():.3f}")
    print("peak GiB", torch.cuda.max_memory_allocated() / 2**30)


if __name__ == "__main__":
    main()
