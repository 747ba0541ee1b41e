"""3-D U-Net for volumetric (CT/MRI) segmentation on random 96^3 crops.

Only the forward pass runs under bf16 autocast; the loss is computed in fp32 outside it.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

PATCH = (96, 96, 96)
IN_CH = 1
NUM_CLASSES = 4
FEATURES = [32, 64, 128, 256]
BATCH = 4
ITERS = 5


def conv_block(in_c, out_c):
    return nn.Sequential(
        nn.Conv3d(in_c, out_c, 3, padding=1, bias=False),
        nn.InstanceNorm3d(out_c, affine=True),
        nn.LeakyReLU(0.01, inplace=True),
        nn.Conv3d(out_c, out_c, 3, padding=1, bias=False),
        nn.InstanceNorm3d(out_c, affine=True),
        nn.LeakyReLU(0.01, inplace=True),
    )


class UNet3D(nn.Module):
    def __init__(self, in_ch, n_classes, features):
        super().__init__()
        self.encoders = nn.ModuleList()
        c = in_ch
        for f in features:
            self.encoders.append(conv_block(c, f))
            c = f
        self.pool = nn.MaxPool3d(2)
        self.bottleneck = conv_block(features[-1], features[-1] * 2)
        self.ups = nn.ModuleList()
        self.decoders = nn.ModuleList()
        c = features[-1] * 2
        for f in reversed(features):
            self.ups.append(nn.ConvTranspose3d(c, f, kernel_size=2, stride=2))
            self.decoders.append(conv_block(f * 2, f))
            c = f
        self.head = nn.Conv3d(features[0], n_classes, 1)

    def forward(self, x):
        skips = []
        for enc in self.encoders:
            x = enc(x)
            skips.append(x)
            x = self.pool(x)
        x = self.bottleneck(x)
        for up, dec, skip in zip(self.ups, self.decoders, reversed(skips)):
            x = up(x)
            x = dec(torch.cat([x, skip], dim=1))
        return self.head(x)


class RandomVolumes(Dataset):
    def __len__(self):
        return BATCH * ITERS

    def __getitem__(self, i):
        vol = torch.randn(IN_CH, *PATCH)
        seg = torch.randint(0, NUM_CLASSES, PATCH)
        return vol, seg


def soft_dice(logits, target, eps=1e-5):
    probs = logits.softmax(1)
    onehot = F.one_hot(target, NUM_CLASSES).permute(0, 4, 1, 2, 3).float()
    dims = (0, 2, 3, 4)
    inter = (probs * onehot).sum(dims)
    denom = probs.sum(dims) + onehot.sum(dims)
    return 1 - ((2 * inter + eps) / (denom + eps)).mean()


def main():
    device = torch.device("cuda")
    model = UNet3D(IN_CH, NUM_CLASSES, FEATURES).to(device)
    optimizer = torch.optim.NAdam(model.parameters(), lr=3e-4, weight_decay=3e-5)
    loader = DataLoader(RandomVolumes(), batch_size=BATCH, num_workers=2)

    model.train()
    for it, (vol, seg) in enumerate(loader):
        vol, seg = vol.to(device), seg.to(device)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(vol)
        logits = logits.float()
        loss = F.cross_entropy(logits, seg) + soft_dice(logits, seg)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 12.0)
        optimizer.step()
        print(f"iter {it}: loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
