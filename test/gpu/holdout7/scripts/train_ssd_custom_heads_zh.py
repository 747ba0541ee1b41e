# -*- coding: utf-8 -*-
"""SSD300 风格的目标检测训练脚本（自己写的检测头）。

骨干网络用 torchvision 的 resnet50（不加载预训练权重），取 layer2 / layer3 的特征，
再接几层额外的卷积得到 6 个尺度的特征图，每个尺度一个分类头和一个回归头。
数据是随机生成的（已经和先验框匹配好的目标），只为了跑通流程。
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from torch.utils.data import DataLoader, Dataset

# ---------------- 超参数 ----------------
NUM_CLASSES = 21          # 20 类 + 背景
IMG_SIZE = 300
BATCH_SIZE = 64
LR = 1e-3
MAX_ITERS = 5
NEG_POS_RATIO = 3
ANCHORS_PER_LOC = [4, 6, 6, 6, 4, 4]
FEATURE_SIZES = [38, 19, 10, 5, 3, 1]
NUM_ANCHORS = sum(s * s * a for s, a in zip(FEATURE_SIZES, ANCHORS_PER_LOC))  # 8732


def extra_block(c_in, c_mid, c_out, stride, padding):
    # 1x1 降维 + 3x3 下采样
    return nn.Sequential(
        nn.Conv2d(c_in, c_mid, 1), nn.BatchNorm2d(c_mid), nn.ReLU(inplace=True),
        nn.Conv2d(c_mid, c_out, 3, stride=stride, padding=padding), nn.BatchNorm2d(c_out), nn.ReLU(inplace=True),
    )


class SSD300(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        r = torchvision.models.resnet50(weights=None)
        self.stem = nn.Sequential(r.conv1, r.bn1, r.relu, r.maxpool, r.layer1, r.layer2)   # 38x38, 512 通道
        self.layer3 = r.layer3                                                               # 19x19, 1024 通道
        self.extras = nn.ModuleList([
            extra_block(1024, 256, 512, 2, 1),   # 10x10
            extra_block(512, 128, 256, 2, 1),    # 5x5
            extra_block(256, 128, 256, 1, 0),    # 3x3
            extra_block(256, 128, 256, 1, 0),    # 1x1
        ])
        channels = [512, 1024, 512, 256, 256, 256]
        self.num_classes = num_classes
        # 每个尺度一个分类头、一个回归头
        self.cls_heads = nn.ModuleList(
            [nn.Conv2d(c, a * num_classes, 3, padding=1) for c, a in zip(channels, ANCHORS_PER_LOC)])
        self.reg_heads = nn.ModuleList(
            [nn.Conv2d(c, a * 4, 3, padding=1) for c, a in zip(channels, ANCHORS_PER_LOC)])

    def forward(self, x):
        feats = []
        x = self.stem(x)
        feats.append(x)
        x = self.layer3(x)
        feats.append(x)
        for blk in self.extras:
            x = blk(x)
            feats.append(x)
        cls_out, reg_out = [], []
        for f, ch, rh in zip(feats, self.cls_heads, self.reg_heads):
            n = f.shape[0]
            cls_out.append(ch(f).permute(0, 2, 3, 1).reshape(n, -1, self.num_classes))
            reg_out.append(rh(f).permute(0, 2, 3, 1).reshape(n, -1, 4))
        return torch.cat(cls_out, 1), torch.cat(reg_out, 1)


class MatchedBoxes(Dataset):
    """假数据：图像 + 已经匹配到每个先验框的类别和偏移量。"""

    def __init__(self, n):
        self.n = n
        self.img = torch.randn(16, 3, IMG_SIZE, IMG_SIZE)

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        labels = torch.zeros(NUM_ANCHORS, dtype=torch.long)
        pos = torch.randint(0, NUM_ANCHORS, (40,))
        labels[pos] = torch.randint(1, NUM_CLASSES, (40,))
        loc = torch.randn(NUM_ANCHORS, 4) * 0.1
        return self.img[i % 16], labels, loc


def multibox_loss(cls_logits, loc_pred, labels, loc_t):
    pos = labels > 0
    num_pos = pos.sum(1, keepdim=True)
    loc_loss = F.smooth_l1_loss(loc_pred[pos], loc_t[pos], reduction="sum")
    ce = F.cross_entropy(cls_logits.reshape(-1, NUM_CLASSES).float(), labels.reshape(-1), reduction="none")
    ce = ce.view(labels.shape)
    # 难例挖掘：负样本按损失排序，只保留 3 倍于正样本的数量
    with torch.no_grad():
        neg_loss = ce.clone()
        neg_loss[pos] = 0
        _, order = neg_loss.sort(1, descending=True)
        _, rank = order.sort(1)
        neg = rank < NEG_POS_RATIO * num_pos
    conf_loss = ce[pos | neg].sum()
    n = num_pos.sum().clamp(min=1).float()
    return loc_loss / n, conf_loss / n


def main():
    device = "cuda"
    model = SSD300(NUM_CLASSES).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=LR, momentum=0.9, weight_decay=5e-4)
    scaler = torch.amp.GradScaler()
    loader = DataLoader(MatchedBoxes(BATCH_SIZE * MAX_ITERS), batch_size=BATCH_SIZE, shuffle=True,
                        num_workers=4, drop_last=True)
    model.train()
    for it, (img, labels, loc_t) in enumerate(loader):
        img, labels, loc_t = img.to(device), labels.to(device), loc_t.to(device)
        with torch.autocast("cuda", dtype=torch.float16):
            cls_logits, loc_pred = model(img)
        l_loc, l_conf = multibox_loss(cls_logits.float(), loc_pred.float(), labels, loc_t)
        loss = l_loc + l_conf
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        print(f"iter {it}: loc {l_loc.item():.3f} conf {l_conf.item():.3f}")  # 打印损失
        if it + 1 >= MAX_ITERS:
            break


if __name__ == "__main__":
    main()
