"""U-Net for cell nuclei segmentation (DSB2018-style folders)."""
import argparse
import glob
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader, Dataset


class DoubleConv(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
            nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
        )

    def forward(self, x):
        return self.net(x)


class UNet(nn.Module):
    def __init__(self, in_ch=3, n_classes=1, widths=(64, 128, 256, 512)):
        super().__init__()
        self.downs = nn.ModuleList()
        self.ups = nn.ModuleList()
        self.pool = nn.MaxPool2d(2)
        c = in_ch
        for w in widths:
            self.downs.append(DoubleConv(c, w))
            c = w
        self.bottleneck = DoubleConv(widths[-1], widths[-1] * 2)
        for w in reversed(widths):
            self.ups.append(nn.ConvTranspose2d(w * 2, w, 2, stride=2))
            self.ups.append(DoubleConv(w * 2, w))
        self.head = nn.Conv2d(widths[0], n_classes, 1)

    def forward(self, x):
        skips = []
        for down in self.downs:
            x = down(x)
            skips.append(x)
            x = self.pool(x)
        x = self.bottleneck(x)
        skips = skips[::-1]
        for i in range(0, len(self.ups), 2):
            x = self.ups[i](x)
            skip = skips[i // 2]
            if x.shape[-2:] != skip.shape[-2:]:
                x = F.interpolate(x, size=skip.shape[-2:])
            x = self.ups[i + 1](torch.cat([skip, x], dim=1))
        return self.head(x)


class NucleiDataset(Dataset):
    def __init__(self, root, size=256):
        self.items = sorted(glob.glob(os.path.join(root, "*", "images", "*.png")))
        self.size = size

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        img_path = self.items[i]
        img = Image.open(img_path).convert("RGB").resize((self.size, self.size))
        mask_dir = os.path.join(os.path.dirname(os.path.dirname(img_path)), "masks")
        mask = np.zeros((self.size, self.size), dtype=np.float32)
        for m in glob.glob(os.path.join(mask_dir, "*.png")):
            mask = np.maximum(mask, np.array(Image.open(m).resize((self.size, self.size))) / 255.0)
        x = torch.from_numpy(np.array(img, dtype=np.float32) / 255.0).permute(2, 0, 1)
        return x, torch.from_numpy(mask).unsqueeze(0)


def dice_loss(logits, target, eps=1.0):
    p = torch.sigmoid(logits)
    num = 2 * (p * target).sum(dim=(2, 3)) + eps
    den = p.sum(dim=(2, 3)) + target.sum(dim=(2, 3)) + eps
    return 1 - (num / den).mean()


def validate(model, loader, device):
    model.eval()
    dices = []
    with torch.no_grad():
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            pred = (torch.sigmoid(model(x)) > 0.5).float()
            inter = (pred * y).sum(dim=(1, 2, 3))
            dices.append(((2 * inter + 1) / (pred.sum(dim=(1, 2, 3)) + y.sum(dim=(1, 2, 3)) + 1)).mean().item())
    return float(np.mean(dices))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", default="data/stage1_train")
    ap.add_argument("--val", default="data/stage1_val")
    ap.add_argument("--epochs", type=int, default=60)
    ap.add_argument("--bs", type=int, default=16)
    args = ap.parse_args()

    device = torch.device("cuda")
    model = UNet()
    if torch.cuda.device_count() > 1:
        print("using", torch.cuda.device_count(), "GPUs")
        model = nn.DataParallel(model)  # expect: OOM108
    model = model.to(device)

    train_dl = DataLoader(NucleiDataset(args.train), batch_size=args.bs, shuffle=True, num_workers=8, drop_last=True)
    val_dl = DataLoader(NucleiDataset(args.val), batch_size=args.bs, num_workers=8)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-4)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="max", patience=5)
    best = 0.0

    for epoch in range(args.epochs):
        model.train()
        epoch_loss = 0.0
        for x, y in train_dl:
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad(set_to_none=True)
            logits = model(x)
            loss = F.binary_cross_entropy_with_logits(logits, y) + dice_loss(logits, y)
            loss.backward()
            optimizer.step()
            epoch_loss += loss.item()
            del logits, loss
            torch.cuda.empty_cache()  # expect: OOM106
        val_dice = validate(model, val_dl, device)
        scheduler.step(val_dice)
        print(f"epoch {epoch}: loss {epoch_loss / len(train_dl):.4f} val dice {val_dice:.4f}")
        if val_dice > best:
            best = val_dice
            state = model.module.state_dict() if isinstance(model, nn.DataParallel) else model.state_dict()
            torch.save(state, "unet_best.pt")


if __name__ == "__main__":
    main()
