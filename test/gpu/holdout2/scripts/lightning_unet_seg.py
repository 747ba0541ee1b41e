"""Semantic segmentation (6 land-cover classes) with a small U-Net in Lightning.

python lightning_unet_seg.py --crop 256 -b 24
"""
import argparse

import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


def parse():
    ap = argparse.ArgumentParser()
    ap.add_argument("-b", "--batch-size", dest="batch_size", type=int, default=24)
    ap.add_argument("--crop", dest="crop_size", type=int, default=256, help="random crop fed to the net")
    ap.add_argument("--tile", dest="tile_size", type=int, default=320, help="size of the stored tiles")
    ap.add_argument("--base", dest="base_ch", type=int, default=48)
    ap.add_argument("--depth", type=int, default=4)
    ap.add_argument("--classes", dest="n_classes", type=int, default=6)
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--steps", dest="max_steps", type=int, default=5)
    return ap.parse_args()


# ---------------------------------------------------------------- data
class Tiles(Dataset):
    def __init__(self, n, tile, crop, n_classes, train=True):
        self.n, self.tile, self.crop, self.k, self.train = n, tile, crop, n_classes, train

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        img = torch.randn(4, self.tile, self.tile)          # RGB + NIR
        mask = torch.randint(0, self.k, (self.tile, self.tile))
        if self.train:
            top = torch.randint(0, self.tile - self.crop + 1, (1,)).item()
            left = torch.randint(0, self.tile - self.crop + 1, (1,)).item()
        else:
            top = left = (self.tile - self.crop) // 2
        img = img[:, top:top + self.crop, left:left + self.crop]
        mask = mask[top:top + self.crop, left:left + self.crop]
        if self.train and torch.rand(()) < 0.5:
            img, mask = img.flip(-1), mask.flip(-1)
        return img, mask


# ---------------------------------------------------------------- model
def conv_block(cin, cout):
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, padding=1, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU(inplace=True),
        nn.Conv2d(cout, cout, 3, padding=1, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU(inplace=True),
    )


class Down(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.pool = nn.MaxPool2d(2)
        self.conv = conv_block(cin, cout)

    def forward(self, x):
        return self.conv(self.pool(x))


class Up(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.up = nn.ConvTranspose2d(cin, cin // 2, 2, stride=2)
        self.conv = conv_block(cin // 2 + cout, cout)

    def forward(self, x, skip):
        x = self.up(x)
        return self.conv(torch.cat([skip, x], dim=1))


class UNet(nn.Module):
    def __init__(self, in_ch, n_classes, base=64, depth=4):
        super().__init__()
        chs = [base * 2 ** i for i in range(depth + 1)]
        self.stem = conv_block(in_ch, chs[0])
        self.downs = nn.ModuleList([Down(chs[i], chs[i + 1]) for i in range(depth)])
        self.ups = nn.ModuleList([Up(chs[i + 1], chs[i]) for i in reversed(range(depth))])
        self.head = nn.Conv2d(chs[0], n_classes, 1)

    def forward(self, x):
        x = self.stem(x)
        skips = [x]
        for down in self.downs:
            x = down(x)
            skips.append(x)
        skips.pop()
        for up in self.ups:
            x = up(x, skips.pop())
        return self.head(x)


# ---------------------------------------------------------------- lightning
class SegModule(L.LightningModule):
    def __init__(self, hp):
        super().__init__()
        self.save_hyperparameters(vars(hp))
        self.net = UNet(4, hp.n_classes, base=hp.base_ch, depth=hp.depth)

    def forward(self, x):
        return self.net(x)

    def _dice(self, logits, mask):
        probs = logits.softmax(1)
        onehot = F.one_hot(mask, probs.size(1)).permute(0, 3, 1, 2).to(probs.dtype)
        inter = (probs * onehot).sum((0, 2, 3))
        union = probs.sum((0, 2, 3)) + onehot.sum((0, 2, 3))
        return 1 - ((2 * inter + 1) / (union + 1)).mean()

    def training_step(self, batch, batch_idx):
        img, mask = batch
        logits = self(img)
        loss = F.cross_entropy(logits, mask) + 0.5 * self._dice(logits, mask)
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        img, mask = batch
        logits = self(img)
        iou = ((logits.argmax(1) == mask).float().mean())
        self.log("val_pixacc", iou)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hparams.lr, weight_decay=1e-5)

    def on_train_end(self):
        print("finished after", self.global_step, "steps")


def main():
    hp = parse()
    train = Tiles(hp.batch_size * hp.max_steps, hp.tile_size, hp.crop_size, hp.n_classes, train=True)
    val = Tiles(hp.batch_size * 2, hp.tile_size, hp.crop_size, hp.n_classes, train=False)
    train_dl = DataLoader(train, batch_size=hp.batch_size, shuffle=True, num_workers=2, drop_last=True)
    val_dl = DataLoader(val, batch_size=hp.batch_size, num_workers=2)

    trainer = L.Trainer(
        accelerator="gpu",
        devices=1,
        precision="bf16-mixed",
        max_steps=hp.max_steps,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        num_sanity_val_steps=0,
        limit_val_batches=2,
    )
    trainer.fit(SegModule(hp), train_dl, val_dl)


if __name__ == "__main__":
    main()
