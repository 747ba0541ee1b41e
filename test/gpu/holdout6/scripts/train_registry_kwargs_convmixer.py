"""ConvMixer built through a registry: MODEL_REGISTRY[name](**kwargs), kwargs passed down through
ConvMixer -> MixerStage -> MixerBlock constructors."""
import argparse

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

MODEL_REGISTRY = {}


def register(name):
    def deco(cls):
        MODEL_REGISTRY[name] = cls
        return cls
    return deco


class Residual(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x) + x


class MixerBlock(nn.Sequential):
    def __init__(self, dim, kernel_size=9, act_layer=nn.GELU, **unused):
        super().__init__(
            Residual(nn.Sequential(
                nn.Conv2d(dim, dim, kernel_size, groups=dim, padding="same"),
                act_layer(),
                nn.BatchNorm2d(dim),
            )),
            nn.Conv2d(dim, dim, kernel_size=1),
            act_layer(),
            nn.BatchNorm2d(dim),
        )


class MixerStage(nn.Module):
    def __init__(self, dim, depth, **block_kwargs):
        super().__init__()
        self.blocks = nn.Sequential(*[MixerBlock(dim, **block_kwargs) for _ in range(depth)])

    def forward(self, x):
        return self.blocks(x)


@register("convmixer")
class ConvMixer(nn.Module):
    def __init__(self, dim, depth, patch_size=7, num_classes=1000, in_chans=3, **kwargs):
        super().__init__()
        act = kwargs.get("act_layer", nn.GELU)
        self.stem = nn.Sequential(nn.Conv2d(in_chans, dim, patch_size, stride=patch_size), act(), nn.BatchNorm2d(dim))
        self.stage = MixerStage(dim, depth, **kwargs)
        self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(dim, num_classes))

    def forward(self, x):
        return self.head(self.stage(self.stem(x)))


ARCHS = {
    "convmixer_768_32": dict(dim=768, depth=32, patch_size=7, kernel_size=7),
    "convmixer_1024_20": dict(dim=1024, depth=20, patch_size=14, kernel_size=9),
    "convmixer_1536_20": dict(dim=1536, depth=20, patch_size=7, kernel_size=9),
}


def build_model(arch, **overrides):
    kwargs = {**ARCHS[arch], **overrides}
    family = arch.split("_")[0]
    return MODEL_REGISTRY[family](**kwargs)


class RandomData(Dataset):
    def __init__(self, n, size, classes):
        self.n, self.size, self.classes = n, size, classes

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.randn(3, self.size, self.size), i % self.classes


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", default="convmixer_768_32", choices=list(ARCHS))
    ap.add_argument("--num-classes", type=int, default=1000)
    ap.add_argument("-b", "--batch-size", type=int, default=48)
    ap.add_argument("--img-size", type=int, default=224)
    ap.add_argument("--steps", type=int, default=6)
    args = ap.parse_args()

    model = build_model(args.arch, num_classes=args.num_classes).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.05)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=1e-2, total_steps=args.steps)
    scaler = torch.amp.GradScaler("cuda")
    loader = DataLoader(RandomData(args.batch_size * args.steps, args.img_size, args.num_classes),
                        batch_size=args.batch_size, shuffle=True, num_workers=2)
    model.train()
    for i, (x, y) in enumerate(loader):
        x, y = x.cuda(), y.cuda()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()
        sched.step()
        print(i, loss.item())


if __name__ == "__main__":
    main()
