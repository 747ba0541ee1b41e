"""CenterNet 风格的目标检测：ResNet-50 主干 + 可变形卷积 (DCNv2) 上采样 + 三个预测头。

主干直接拿 torchvision 的 resnet50，把 children() 去掉最后两个（avgpool、fc）塞进 nn.Sequential。
数据是随机生成的（只为了跑通流程）。
"""
from functools import partial
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from torchvision.models import resnet50
from torchvision.ops import deform_conv2d

# ---- 超参数 ----
INPUT_RES = 512
DOWN_RATIO = 4
OUTPUT_RES = INPUT_RES // DOWN_RATIO  # 热力图分辨率 128
NUM_CLASSES = 80
MAX_OBJS = 128
BATCH_SIZE = 32
LR = 1.25e-4 * BATCH_SIZE / 4  # 按 batch 线性缩放学习率
NUM_STEPS = 4
DECONV_CHANNELS = (256, 128, 64)

Norm = partial(nn.BatchNorm2d, momentum=0.1)


class DCNv2(nn.Module):
    """调制可变形卷积：offset 和 mask 由一个普通卷积预测。"""

    def __init__(self, c_in, c_out, k=3, stride=1, padding=1, deformable_groups=1):
        super().__init__()
        self.stride, self.padding = stride, padding
        self.weight = nn.Parameter(torch.empty(c_out, c_in, k, k))
        self.bias = nn.Parameter(torch.zeros(c_out))
        nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        # 3 * k * k：前 2kk 是 offset，后 kk 是 mask
        self.conv_offset_mask = nn.Conv2d(c_in, deformable_groups * 3 * k * k, k, stride, padding)
        nn.init.zeros_(self.conv_offset_mask.weight)
        nn.init.zeros_(self.conv_offset_mask.bias)

    def forward(self, x):
        out = self.conv_offset_mask(x)
        o1, o2, mask = torch.chunk(out, 3, dim=1)
        offset = torch.cat((o1, o2), dim=1)
        mask = torch.sigmoid(mask)
        return deform_conv2d(x, offset, self.weight, self.bias, stride=self.stride, padding=self.padding, mask=mask)


def deconv_stage(c_in, c_out):
    # DCN -> BN -> ReLU -> 反卷积 x2 上采样 -> BN -> ReLU
    return nn.Sequential(
        DCNv2(c_in, c_out),
        Norm(c_out),
        nn.ReLU(inplace=True),
        nn.ConvTranspose2d(c_out, c_out, 4, stride=2, padding=1, output_padding=0, bias=False),
        Norm(c_out),
        nn.ReLU(inplace=True),
    )


def head(c_in, c_out, head_conv=64, bias_fill=None):
    h = nn.Sequential(nn.Conv2d(c_in, head_conv, 3, padding=1), nn.ReLU(inplace=True), nn.Conv2d(head_conv, c_out, 1))
    if bias_fill is not None:
        h[-1].bias.data.fill_(bias_fill)
    return h


class CenterNet(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        backbone = resnet50(weights=None)
        self.backbone = nn.Sequential(*list(backbone.children())[:-2])  # 输出 2048 通道, stride 32
        stages, c = [], 2048
        for c_out in DECONV_CHANNELS:
            stages.append(deconv_stage(c, c_out))
            c = c_out
        self.deconv = nn.Sequential(*stages)
        self.heads = nn.ModuleDict({
            "hm": head(c, num_classes, bias_fill=-2.19),
            "wh": head(c, 2),
            "reg": head(c, 2),
        })

    def forward(self, x):
        feat = self.deconv(self.backbone(x))
        return {name: h(feat) for name, h in self.heads.items()}


class RandomCenterNetData(Dataset):
    def __len__(self):
        return BATCH_SIZE * NUM_STEPS

    def __getitem__(self, i):
        img = torch.randn(3, INPUT_RES, INPUT_RES)
        hm = torch.rand(NUM_CLASSES, OUTPUT_RES, OUTPUT_RES).pow(8)  # 大部分接近 0
        ind = torch.randint(0, OUTPUT_RES * OUTPUT_RES, (MAX_OBJS,))
        reg_mask = (torch.arange(MAX_OBJS) < torch.randint(1, 40, ())).float()
        wh = torch.rand(MAX_OBJS, 2) * 64
        reg = torch.rand(MAX_OBJS, 2)
        return img, {"hm": hm, "ind": ind, "reg_mask": reg_mask, "wh": wh, "reg": reg}


def focal_loss(pred_logits, gt):
    pred = torch.clamp(torch.sigmoid(pred_logits.float()), 1e-4, 1 - 1e-4)
    pos = gt.eq(1).float()
    neg = 1 - pos
    neg_weights = torch.pow(1 - gt, 4)
    pos_loss = torch.log(pred) * torch.pow(1 - pred, 2) * pos
    neg_loss = torch.log(1 - pred) * torch.pow(pred, 2) * neg_weights * neg
    num_pos = pos.sum()
    return -(pos_loss.sum() + neg_loss.sum()) / torch.clamp(num_pos, min=1.0)


def reg_l1(output, mask, ind, target):
    # 按 ind 从特征图里取出对应位置的预测值
    b, c = output.shape[:2]
    feat = output.view(b, c, -1).permute(0, 2, 1)
    pred = feat.gather(1, ind.unsqueeze(2).expand(-1, -1, c)).float()
    m = mask.unsqueeze(2).expand_as(pred)
    return F.l1_loss(pred * m, target * m, reduction="sum") / (m.sum() + 1e-4)


def main():
    device = torch.device("cuda")
    model = CenterNet(NUM_CLASSES).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=LR)
    loader = DataLoader(RandomCenterNetData(), batch_size=BATCH_SIZE, shuffle=True, num_workers=4, drop_last=True)

    model.train()
    for step, (img, tgt) in enumerate(loader):
        img = img.to(device, non_blocking=True)
        tgt = {k: v.to(device, non_blocking=True) for k, v in tgt.items()}
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            out = model(img)
        # 损失在 fp32 下计算，三项加权求和
        hm_loss = focal_loss(out["hm"], tgt["hm"])
        wh_loss = reg_l1(out["wh"], tgt["reg_mask"], tgt["ind"], tgt["wh"])
        off_loss = reg_l1(out["reg"], tgt["reg_mask"], tgt["ind"], tgt["reg"])
        loss = hm_loss + 0.1 * wh_loss + off_loss

        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"[{step}] loss {loss.item():.3f} hm {hm_loss.item():.3f} wh {wh_loss.item():.3f} off {off_loss.item():.3f}")


if __name__ == "__main__":
    main()
