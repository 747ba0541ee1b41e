"""病灶分割：ResNet-34 编码器 + U-Net 解码器（跳跃连接用 torch.cat），Dice + BCE 损失。

灰度 CT 切片，512x512，二分类掩码。数据为随机生成。
"""
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from torch.utils.data import DataLoader, Dataset

# ---- 超参数 ----
IMG_SIZE = 2 ** 9          # 512
IN_CHANNELS = 1            # 灰度图
NUM_CLASSES = 1            # 二值掩码
BATCH_SIZE = 12
DECODER_CHANNELS = (256, 128, 64, 32, 16)
LR = 3e-4
EPOCHS = 2
STEPS_PER_EPOCH = 5


class CTSlices(Dataset):
    """假数据：随机图像 + 随机圆形掩码"""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        img = torch.randn(IN_CHANNELS, IMG_SIZE, IMG_SIZE)
        yy, xx = torch.meshgrid(torch.arange(IMG_SIZE), torch.arange(IMG_SIZE), indexing="ij")
        cy, cx, r = torch.randint(64, IMG_SIZE - 64, (2,)).tolist() + [int(torch.randint(10, 60, ()))]
        mask = (((yy - cy) ** 2 + (xx - cx) ** 2) < r * r).float()[None]
        return img, mask


def conv_block(c_in, c_out):
    # 两层 3x3 卷积 + BN + ReLU
    return nn.Sequential(
        nn.Conv2d(c_in, c_out, 3, padding=1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU(inplace=True),
        nn.Conv2d(c_out, c_out, 3, padding=1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU(inplace=True),
    )


class DecoderBlock(nn.Module):
    def __init__(self, c_in, c_skip, c_out):
        super().__init__()
        self.block = conv_block(c_in + c_skip, c_out)

    def forward(self, x, skip=None):
        x = F.interpolate(x, scale_factor=2, mode="nearest")  # 上采样 2 倍
        if skip is not None:
            x = torch.cat([x, skip], dim=1)                   # 跳跃连接：通道维拼接
        return self.block(x)


class ResNetUNet(nn.Module):
    def __init__(self, in_channels=IN_CHANNELS, num_classes=NUM_CLASSES, dec=DECODER_CHANNELS):
        super().__init__()
        r = torchvision.models.resnet34(weights=None)
        # 把第一层卷积换成单通道输入
        r.conv1 = nn.Conv2d(in_channels, 64, kernel_size=7, stride=2, padding=3, bias=False)
        self.stem = nn.Sequential(r.conv1, r.bn1, r.relu)       # 1/2, 64
        self.pool = r.maxpool
        self.enc1, self.enc2, self.enc3, self.enc4 = r.layer1, r.layer2, r.layer3, r.layer4
        # 编码器各层通道数：64(1/2) 64(1/4) 128(1/8) 256(1/16) 512(1/32)
        skips = [256, 128, 64, 64, 0]
        c_in = 512
        blocks = []
        for c_skip, c_out in zip(skips, dec):
            blocks.append(DecoderBlock(c_in, c_skip, c_out))
            c_in = c_out
        self.decoder = nn.ModuleList(blocks)
        self.head = nn.Conv2d(dec[-1], num_classes, kernel_size=3, padding=1)

    def forward(self, x):
        s0 = self.stem(x)
        s1 = self.enc1(self.pool(s0))
        s2 = self.enc2(s1)
        s3 = self.enc3(s2)
        x = self.enc4(s3)
        for block, skip in zip(self.decoder, [s3, s2, s1, s0, None]):
            x = block(x, skip)
        return self.head(x)


def dice_bce_loss(logits, target, eps=1.0):
    bce = F.binary_cross_entropy_with_logits(logits, target)
    prob = torch.sigmoid(logits)
    inter = (prob * target).sum(dim=(1, 2, 3))
    union = prob.sum(dim=(1, 2, 3)) + target.sum(dim=(1, 2, 3))
    dice = 1 - (2 * inter + eps) / (union + eps)
    return bce + dice.mean()


def main():
    device = torch.device("cuda")
    model = ResNetUNet().to(device)
    print("参数量: %.1fM" % (sum(p.numel() for p in model.parameters()) / 1e6))
    optimizer = torch.optim.Adam(model.parameters(), lr=LR)
    loader = DataLoader(CTSlices(BATCH_SIZE * STEPS_PER_EPOCH), batch_size=BATCH_SIZE, shuffle=True,
                        num_workers=4, drop_last=True)

    t0 = time.time()
    for epoch in range(EPOCHS):
        model.train()
        for i, (img, mask) in enumerate(loader):
            img, mask = img.to(device), mask.to(device)
            logits = model(img)
            loss = dice_bce_loss(logits, mask)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            print(f"epoch {epoch} iter {i} loss {loss.item():.4f}")
        # 简单验证：一个 batch，不计算梯度
        model.eval()
        with torch.no_grad():
            pred = (torch.sigmoid(model(img)) > 0.5).float()
            dice = (2 * (pred * mask).sum() / (pred.sum() + mask.sum() + 1e-6)).item()
        print(f"epoch {epoch} val dice {dice:.3f}")
    print(f"用时 {time.time() - t0:.1f}s, 显存峰值 {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
