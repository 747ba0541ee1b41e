"""A YOLO-style one-stage detector written from scratch: CSP backbone, SPPF, PAN neck, decoupled heads on
strides 8/16/32, center-cell target assignment, BCE objectness/classes + GIoU boxes. bf16 autocast.

Widths and depths are scaled from the base table by helper functions, like the yolov5 "s" model.
"""
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from torchvision.ops import generalized_box_iou_loss


class Config:
    img_size = 640
    batch_size = 32
    num_classes = 80
    width_mult = 0.50
    depth_mult = 0.33
    base_channels = (64, 128, 256, 512, 1024)
    base_depths = (3, 6, 9, 3)
    strides = (8, 16, 32)
    max_objects = 30
    lr = 0.01
    momentum = 0.937
    weight_decay = 5e-4
    max_steps = 10
    amp = True


def make_divisible(x, divisor=8):
    return int(math.ceil(x / divisor) * divisor)


def scaled_width(c):
    return make_divisible(c * Config.width_mult)


def scaled_depth(n):
    return max(round(n * Config.depth_mult), 1)


class Conv(nn.Module):
    def __init__(self, c1, c2, k=1, s=1, p=None):
        super().__init__()
        self.conv = nn.Conv2d(c1, c2, k, s, k // 2 if p is None else p, bias=False)
        self.bn = nn.BatchNorm2d(c2, eps=1e-3, momentum=0.03)
        self.act = nn.SiLU(inplace=True)

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class Bottleneck(nn.Module):
    def __init__(self, c, shortcut=True):
        super().__init__()
        self.cv1 = Conv(c, c, 1)
        self.cv2 = Conv(c, c, 3)
        self.add = shortcut

    def forward(self, x):
        y = self.cv2(self.cv1(x))
        return x + y if self.add else y


class C3(nn.Module):
    def __init__(self, c1, c2, n=1, shortcut=True):
        super().__init__()
        c_ = c2 // 2
        self.cv1 = Conv(c1, c_, 1)
        self.cv2 = Conv(c1, c_, 1)
        self.cv3 = Conv(2 * c_, c2, 1)
        self.m = nn.Sequential(*[Bottleneck(c_, shortcut) for _ in range(n)])

    def forward(self, x):
        return self.cv3(torch.cat([self.m(self.cv1(x)), self.cv2(x)], dim=1))


class SPPF(nn.Module):
    def __init__(self, c1, c2, k=5):
        super().__init__()
        c_ = c1 // 2
        self.cv1 = Conv(c1, c_, 1)
        self.cv2 = Conv(c_ * 4, c2, 1)
        self.m = nn.MaxPool2d(k, 1, k // 2)

    def forward(self, x):
        x = self.cv1(x)
        y1 = self.m(x)
        y2 = self.m(y1)
        return self.cv2(torch.cat([x, y1, y2, self.m(y2)], 1))


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        ch = [scaled_width(c) for c in Config.base_channels]
        d = [scaled_depth(n) for n in Config.base_depths]
        self.stem = Conv(3, ch[0], 6, 2, 2)                                 # P1/2
        self.stage2 = nn.Sequential(Conv(ch[0], ch[1], 3, 2), C3(ch[1], ch[1], d[0]))   # P2/4
        self.stage3 = nn.Sequential(Conv(ch[1], ch[2], 3, 2), C3(ch[2], ch[2], d[1]))   # P3/8
        self.stage4 = nn.Sequential(Conv(ch[2], ch[3], 3, 2), C3(ch[3], ch[3], d[2]))   # P4/16
        self.stage5 = nn.Sequential(Conv(ch[3], ch[4], 3, 2), C3(ch[4], ch[4], d[3]), SPPF(ch[4], ch[4]))
        self.out_channels = ch[2:]

    def forward(self, x):
        x = self.stage2(self.stem(x))
        p3 = self.stage3(x)
        p4 = self.stage4(p3)
        p5 = self.stage5(p4)
        return p3, p4, p5


class PANNeck(nn.Module):
    def __init__(self, chs):
        super().__init__()
        c3, c4, c5 = chs
        n = scaled_depth(3)
        self.lat5 = Conv(c5, c4, 1)
        self.td4 = C3(2 * c4, c4, n, shortcut=False)
        self.lat4 = Conv(c4, c3, 1)
        self.td3 = C3(2 * c3, c3, n, shortcut=False)
        self.down3 = Conv(c3, c3, 3, 2)
        self.bu4 = C3(2 * c3, c4, n, shortcut=False)
        self.down4 = Conv(c4, c4, 3, 2)
        self.bu5 = C3(2 * c4, c5, n, shortcut=False)

    def forward(self, p3, p4, p5):
        x5 = self.lat5(p5)
        x4 = self.td4(torch.cat([F.interpolate(x5, scale_factor=2.0, mode="nearest"), p4], 1))
        x4l = self.lat4(x4)
        n3 = self.td3(torch.cat([F.interpolate(x4l, scale_factor=2.0, mode="nearest"), p3], 1))
        n4 = self.bu4(torch.cat([self.down3(n3), x4l], 1))
        n5 = self.bu5(torch.cat([self.down4(n4), x5], 1))
        return n3, n4, n5


class DecoupledHead(nn.Module):
    def __init__(self, c_in, num_classes, hidden):
        super().__init__()
        self.stem = Conv(c_in, hidden, 1)
        self.cls = nn.Sequential(Conv(hidden, hidden, 3), Conv(hidden, hidden, 3), nn.Conv2d(hidden, num_classes, 1))
        self.reg = nn.Sequential(Conv(hidden, hidden, 3), Conv(hidden, hidden, 3))
        self.box = nn.Conv2d(hidden, 4, 1)
        self.obj = nn.Conv2d(hidden, 1, 1)

    def forward(self, x):
        x = self.stem(x)
        r = self.reg(x)
        return torch.cat([self.box(r), self.obj(r), self.cls(x)], 1)   # (B, 5 + C, H, W)


class YOLO(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = Backbone()
        self.neck = PANNeck(self.backbone.out_channels)
        hidden = scaled_width(256)
        self.heads = nn.ModuleList([DecoupledHead(c, Config.num_classes, hidden) for c in self.backbone.out_channels])

    def forward(self, x):
        feats = self.neck(*self.backbone(x))
        return [h(f) for h, f in zip(self.heads, feats)]


def build_targets(boxes, labels, batch_idx, stride, H, W):
    """Assign every box to the grid cell of its center on one level. boxes are xyxy in pixels."""
    cx = ((boxes[:, 0] + boxes[:, 2]) / 2 / stride).long().clamp(0, W - 1)
    cy = ((boxes[:, 1] + boxes[:, 3]) / 2 / stride).long().clamp(0, H - 1)
    return batch_idx, cy, cx


def yolo_loss(outputs, boxes, labels, batch_idx):
    bce = nn.BCEWithLogitsLoss()
    total_obj, total_cls, total_box = 0.0, 0.0, 0.0
    sizes = (boxes[:, 2:] - boxes[:, :2]).max(1).values
    level_of = torch.bucketize(sizes, torch.tensor([64.0, 192.0], device=sizes.device))   # small / medium / large
    for lvl, (out, stride) in enumerate(zip(outputs, Config.strides)):
        out = out.float()
        B, _, H, W = out.shape
        obj_t = torch.zeros(B, H, W, device=out.device)
        sel = level_of == lvl
        if sel.any():
            b, gy, gx = build_targets(boxes[sel], labels[sel], batch_idx[sel], stride, H, W)
            obj_t[b, gy, gx] = 1.0
            pred = out[b, :, gy, gx]                                     # (n, 5 + C)
            # box: sigmoid offsets in the cell and log-scale sizes
            pxy = (pred[:, :2].sigmoid() * 2 - 0.5 + torch.stack([gx, gy], 1)) * stride
            pwh = pred[:, 2:4].clamp(max=6).exp() * stride
            pbox = torch.cat([pxy - pwh / 2, pxy + pwh / 2], 1)
            total_box = total_box + generalized_box_iou_loss(pbox, boxes[sel], reduction="mean")
            cls_t = F.one_hot(labels[sel], Config.num_classes).float()
            total_cls = total_cls + bce(pred[:, 5:], cls_t)
        total_obj = total_obj + bce(out[:, 4], obj_t)
    return 0.05 * total_box + 1.0 * total_obj + 0.5 * total_cls


class RandomCOCO(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        img = torch.rand(3, Config.img_size, Config.img_size)
        k = int(torch.randint(1, Config.max_objects + 1, ()))
        xy = torch.rand(k, 2) * (Config.img_size - 40)
        wh = 8 + torch.rand(k, 2) * (Config.img_size / 2)
        boxes = torch.cat([xy, (xy + wh).clamp(max=Config.img_size - 1)], 1)
        return img, boxes, torch.randint(0, Config.num_classes, (k,))


def collate(batch):
    imgs, boxes, labels, idx = [], [], [], []
    for i, (im, b, l) in enumerate(batch):
        imgs.append(im)
        boxes.append(b)
        labels.append(l)
        idx.append(torch.full((len(l),), i))
    return torch.stack(imgs), torch.cat(boxes), torch.cat(labels), torch.cat(idx)


def main():
    device = "cuda"
    model = YOLO().to(device)
    print(f"{sum(p.numel() for p in model.parameters()) / 1e6:.2f}M params")
    g_bn, g_w, g_b = [], [], []
    for m in model.modules():
        if hasattr(m, "bias") and isinstance(m.bias, nn.Parameter):
            g_b.append(m.bias)
        if isinstance(m, nn.BatchNorm2d):
            g_bn.append(m.weight)
        elif hasattr(m, "weight") and isinstance(m.weight, nn.Parameter):
            g_w.append(m.weight)
    opt = torch.optim.SGD(g_bn, lr=Config.lr, momentum=Config.momentum, nesterov=True)
    opt.add_param_group({"params": g_w, "weight_decay": Config.weight_decay})
    opt.add_param_group({"params": g_b})

    loader = DataLoader(RandomCOCO(Config.batch_size * Config.max_steps), batch_size=Config.batch_size,
                        shuffle=True, num_workers=6, collate_fn=collate, drop_last=True)
    t0 = time.time()
    model.train()
    for step, (imgs, boxes, labels, bidx) in enumerate(loader):
        imgs, boxes, labels, bidx = imgs.to(device), boxes.to(device), labels.to(device), bidx.to(device)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=Config.amp):
            outputs = model(imgs)
        loss = yolo_loss(outputs, boxes, labels, bidx) * Config.batch_size
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 10.0)
        opt.step()
        print(f"step {step} loss {loss.item():.3f} ({time.time() - t0:.1f}s)")
    print(f"peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
