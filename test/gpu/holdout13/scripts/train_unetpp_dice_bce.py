# UNet++ (nested U-Net) for polyp / lesion segmentation, Dice + BCE, channels_last + bf16 autocast.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

BASE = 32
DEPTH = 5
FILTERS = [BASE * 2 ** i for i in range(DEPTH)]      # 32, 64, 128, 256, 512
TILE = 384
BATCH = 16
EPOCHS = 2
STEPS_PER_EPOCH = 4
LR = 3e-4
ACT = "ReLU"
ARCH = "unetpp"

MODELS = {}


def register(name):
    def deco(cls):
        MODELS[name] = cls
        return cls
    return deco


class ConvBlock(nn.Module):
    def __init__(self, cin, cmid, cout):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(cin, cmid, 3, padding=1, bias=False), nn.BatchNorm2d(cmid), getattr(nn, ACT)(inplace=True),
            nn.Conv2d(cmid, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), getattr(nn, ACT)(inplace=True),
        )

    def forward(self, x):
        return self.body(x)


@register("unet")
class UNet(nn.Module):
    def __init__(self, in_ch=3, n_classes=1, nb=FILTERS):
        super().__init__()
        self.downs = nn.ModuleList([ConvBlock(in_ch if i == 0 else nb[i - 1], nb[i], nb[i]) for i in range(len(nb))])
        self.ups = nn.ModuleList([ConvBlock(nb[i] + nb[i + 1], nb[i], nb[i]) for i in range(len(nb) - 1)])
        self.final = nn.Conv2d(nb[0], n_classes, 1)

    def forward(self, x):
        skips = []
        for i, d in enumerate(self.downs):
            x = d(x if i == 0 else F.max_pool2d(x, 2))
            skips.append(x)
        x = skips.pop()
        for up in reversed(self.ups):
            x = up(torch.cat([skips.pop(), F.interpolate(x, scale_factor=2, mode="bilinear")], 1))
        return self.final(x)


@register("unetpp")
class NestedUNet(nn.Module):
    def __init__(self, in_ch=3, n_classes=1, nb=FILTERS):
        super().__init__()
        self.depth = len(nb)
        self.pool = nn.MaxPool2d(2)
        self.up = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True)
        self.nodes = nn.ModuleDict()
        for i in range(self.depth):
            for j in range(self.depth - i):
                if j == 0:
                    cin = in_ch if i == 0 else nb[i - 1]
                else:
                    cin = nb[i] * j + nb[i + 1]
                self.nodes[f"x{i}_{j}"] = ConvBlock(cin, nb[i], nb[i])
        self.final = nn.Conv2d(nb[0], n_classes, 1)

    def forward(self, x):
        X = {}
        for i in range(self.depth):
            inp = x if i == 0 else self.pool(X[(i - 1, 0)])
            X[(i, 0)] = self.nodes[f"x{i}_0"](inp)
        for j in range(1, self.depth):
            for i in range(self.depth - j):
                skips = [X[(i, k)] for k in range(j)]
                X[(i, j)] = self.nodes[f"x{i}_{j}"](torch.cat(skips + [self.up(X[(i + 1, j - 1)])], dim=1))
        return self.final(X[(0, self.depth - 1)])


class PolypSet(Dataset):
    def __len__(self):
        return BATCH * STEPS_PER_EPOCH

    def __getitem__(self, i):
        img = torch.randn(3, TILE, TILE)
        mask = (torch.rand(1, TILE, TILE) > 0.7).float()
        return img, mask


def dice_loss(logits, target, eps=1.0):
    p = torch.sigmoid(logits)
    num = 2 * (p * target).sum(dim=(1, 2, 3)) + eps
    den = p.sum(dim=(1, 2, 3)) + target.sum(dim=(1, 2, 3)) + eps
    return 1 - (num / den).mean()


device = torch.device("cuda")
model = MODELS[ARCH](in_ch=3, n_classes=1).to(device).to(memory_format=torch.channels_last)
print("params (M):", sum(p.numel() for p in model.parameters()) / 1e6)
opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=1e-4)
loader = DataLoader(PolypSet(), batch_size=BATCH, shuffle=True, num_workers=4, pin_memory=True)

for epoch in range(EPOCHS):
    model.train()
    for it, (img, mask) in enumerate(loader):
        img = img.to(device, non_blocking=True).contiguous(memory_format=torch.channels_last)
        mask = mask.to(device, non_blocking=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(img)
        logits = logits.float()
        loss = F.binary_cross_entropy_with_logits(logits, mask) + dice_loss(logits, mask)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        print(f"epoch {epoch} it {it} loss {loss.item():.4f}")

print(f"max memory allocated: {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")
