"""ResNet-style classifier organised like a small research repo: config tree, model split over helper modules,
train_one_epoch() called per epoch until max_steps."""
import time
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

cfg = SimpleNamespace(
    data=SimpleNamespace(image_size=192, num_classes=300, train_len=256 * 3, workers=4),
    model=SimpleNamespace(stem_width=64, widths=(256, 512, 1024, 2048), depths=(3, 4, 6, 3),
                          bottleneck_ratio=4),
    optim=SimpleNamespace(lr=0.2, weight_decay=1e-4),
    train=SimpleNamespace(batch_size=128, max_steps=8, log_interval=2),
)


# --------------------------------------------------------------------- layers

class ConvBNAct(nn.Module):
    def __init__(self, c_in, c_out, k=3, stride=1, act=True):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, k, stride=stride, padding=k // 2, bias=False)
        self.bn = nn.BatchNorm2d(c_out)
        self.act = nn.ReLU(inplace=True) if act else nn.Identity()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class Bottleneck(nn.Module):
    def __init__(self, c_in, c_out, stride, ratio):
        super().__init__()
        mid = c_out // ratio
        self.branch = nn.Sequential(
            ConvBNAct(c_in, mid, k=1),
            ConvBNAct(mid, mid, k=3, stride=stride),
            ConvBNAct(mid, c_out, k=1, act=False),
        )
        self.shortcut = (nn.Identity() if stride == 1 and c_in == c_out
                         else ConvBNAct(c_in, c_out, k=1, stride=stride, act=False))

    def forward(self, x):
        return F.relu(self.branch(x) + self.shortcut(x))


class Stage(nn.Module):
    def __init__(self, c_in, c_out, depth, stride, ratio):
        super().__init__()
        blocks = [Bottleneck(c_in, c_out, stride, ratio)]
        blocks += [Bottleneck(c_out, c_out, 1, ratio) for _ in range(depth - 1)]
        self.blocks = nn.Sequential(*blocks)

    def forward(self, x):
        return self.blocks(x)


class Backbone(nn.Module):
    def __init__(self, mcfg):
        super().__init__()
        self.stem = nn.Sequential(ConvBNAct(3, mcfg.stem_width, k=7, stride=2), nn.MaxPool2d(3, 2, 1))
        stages, c = [], mcfg.stem_width
        for i, (w, d) in enumerate(zip(mcfg.widths, mcfg.depths)):
            stages.append(Stage(c, w, d, stride=1 if i == 0 else 2, ratio=mcfg.bottleneck_ratio))
            c = w
        self.stages = nn.ModuleList(stages)
        self.out_channels = c

    def forward(self, x):
        x = self.stem(x)
        for s in self.stages:
            x = s(x)
        return x


class Classifier(nn.Module):
    def __init__(self, mcfg, num_classes):
        super().__init__()
        self.backbone = Backbone(mcfg)
        self.head = nn.Linear(self.backbone.out_channels, num_classes)

    def forward(self, x):
        x = self.backbone(x)
        return self.head(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def build_model(c):
    return Classifier(c.model, c.data.num_classes)


# --------------------------------------------------------------------- data

class RandomImages(Dataset):
    def __init__(self, dcfg):
        self.d = dcfg

    def __len__(self):
        return self.d.train_len

    def __getitem__(self, i):
        return torch.randn(3, self.d.image_size, self.d.image_size), i % self.d.num_classes


# --------------------------------------------------------------------- engine

def train_one_epoch(model, loader, optimizer, device, epoch, step, max_steps, log_interval=10):
    model.train()
    t0 = time.time()
    for images, targets in loader:
        images = images.to(device, non_blocking=True)
        targets = targets.to(device, non_blocking=True)
        loss = F.cross_entropy(model(images), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        step += 1
        if step % log_interval == 0:
            print(f"epoch {epoch} step {step} loss {loss.item():.3f} {time.time() - t0:.1f}s")
        if step >= max_steps:
            break
    return step


def main():
    device = torch.device("cuda")
    model = build_model(cfg).to(device)
    # plain SGD, no momentum
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg.optim.lr, weight_decay=cfg.optim.weight_decay)
    loader = DataLoader(RandomImages(cfg.data), batch_size=cfg.train.batch_size, shuffle=True,
                        num_workers=cfg.data.workers, drop_last=True)

    step, epoch = 0, 0
    while step < cfg.train.max_steps:
        step = train_one_epoch(model, loader, optimizer, device, epoch, step, cfg.train.max_steps,
                               cfg.train.log_interval)
        epoch += 1
    print("done after", epoch, "epochs")


if __name__ == "__main__":
    main()
