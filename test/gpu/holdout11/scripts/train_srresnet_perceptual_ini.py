"""SRResNet x4 super-resolution with a VGG19 perceptual (content) loss and an EMA of the generator.

Hyper-parameters live in configs/srresnet_x4.ini next to this file.
"""
import configparser
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn
from torch.utils.data import DataLoader, Dataset
from torchvision.models import vgg19

HERE = os.path.dirname(os.path.abspath(__file__))
cfg = configparser.ConfigParser()
cfg.read(os.path.join(HERE, "configs", "srresnet_x4.ini"))

LR_PATCH = cfg.getint("data", "lr_patch")
SCALE = cfg.getint("data", "scale")
HR_PATCH = LR_PATCH * SCALE
BATCH_SIZE = cfg.getint("data", "batch_size")


class ResidualBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c), nn.PReLU(),
            nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c),
        )

    def forward(self, x):
        return x + self.body(x)


class UpsampleBlock(nn.Module):
    def __init__(self, c, factor=2):
        super().__init__()
        self.conv = nn.Conv2d(c, c * factor ** 2, 3, padding=1)
        self.shuffle = nn.PixelShuffle(factor)
        self.act = nn.PReLU()

    def forward(self, x):
        return self.act(self.shuffle(self.conv(x)))


class SRResNet(nn.Module):
    def __init__(self, num_channels=64, num_blocks=16, large_kernel=9, scale=4):
        super().__init__()
        self.head = nn.Sequential(nn.Conv2d(3, num_channels, large_kernel, padding=large_kernel // 2), nn.PReLU())
        self.trunk = nn.Sequential(*[ResidualBlock(num_channels) for _ in range(num_blocks)])
        self.trunk_out = nn.Sequential(nn.Conv2d(num_channels, num_channels, 3, padding=1, bias=False),
                                       nn.BatchNorm2d(num_channels))
        self.upsample = nn.Sequential(*[UpsampleBlock(num_channels) for _ in range(int(math.log2(scale)))])
        self.tail = nn.Conv2d(num_channels, 3, large_kernel, padding=large_kernel // 2)

    def forward(self, x):
        h = self.head(x)
        h = h + self.trunk_out(self.trunk(h))
        return torch.tanh(self.tail(self.upsample(h)))


class ContentLoss(nn.Module):
    """MSE between VGG19 feature maps (up to relu5_4) of SR and HR images."""

    def __init__(self, layer):
        super().__init__()
        self.features = vgg19(weights=None).features[:layer].eval()
        for p in self.features.parameters():
            p.requires_grad_(False)
        self.register_buffer("mean", torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1))
        self.register_buffer("std", torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1))

    def forward(self, sr, hr):
        sr = ((sr + 1) / 2 - self.mean) / self.std
        hr = ((hr + 1) / 2 - self.mean) / self.std
        with torch.no_grad():
            target = self.features(hr)
        return F.mse_loss(self.features(sr), target)


class RandomPatches(Dataset):
    def __len__(self):
        return BATCH_SIZE * cfg.getint("train", "steps")

    def __getitem__(self, i):
        hr = torch.rand(3, HR_PATCH, HR_PATCH) * 2 - 1
        lr = F.interpolate(hr[None], scale_factor=1 / SCALE, mode="bicubic", align_corners=False)[0]
        return lr, hr


def main():
    device = torch.device("cuda")
    net = SRResNet(cfg.getint("model", "num_channels"), cfg.getint("model", "num_blocks"),
                   cfg.getint("model", "large_kernel"), SCALE).to(device)
    ema = AveragedModel(net, multi_avg_fn=get_ema_multi_avg_fn(cfg.getfloat("train", "ema_decay")), use_buffers=True)
    content = ContentLoss(cfg.getint("train", "feature_layer")).to(device)
    optimizer = torch.optim.Adam(net.parameters(), lr=cfg.getfloat("train", "lr"), betas=(0.9, 0.999), fused=True)
    w_content = cfg.getfloat("train", "content_weight")

    loader = DataLoader(RandomPatches(), batch_size=BATCH_SIZE, shuffle=True,
                        num_workers=cfg.getint("data", "num_workers"), drop_last=True)
    net.train()
    for i, (lr_img, hr_img) in enumerate(loader):
        lr_img, hr_img = lr_img.to(device), hr_img.to(device)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            sr = net(lr_img)
            pixel = F.l1_loss(sr, hr_img)
            perceptual = content(sr, hr_img)
            loss = pixel + w_content * perceptual
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        ema.update_parameters(net)
        print(f"iter {i}: pixel {pixel.item():.4f} content {perceptual.item():.4f}")

    ema.eval()
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        sr = ema(lr_img[:8])
        psnr = 10 * torch.log10(4.0 / F.mse_loss(sr.float(), hr_img[:8]))
    print(f"EMA PSNR on last batch: {psnr.item():.2f} dB")


if __name__ == "__main__":
    main()
