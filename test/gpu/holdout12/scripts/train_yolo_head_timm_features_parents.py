"""A YOLO-style anchor-free detector: timm backbone (features_only) + PAN neck + decoupled heads.

Arguments are split in parser "modules" combined with argparse parents=[...], like many detection repos do.
"""
import argparse

import timm
import torch
import torch.nn as nn
import torch.nn.functional as F


def data_parser():
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--img-size", type=int, default=640, dest="img_size")
    p.add_argument("--num-classes", type=int, default=80, dest="num_classes")
    p.add_argument("--batch-size", type=int, default=16, dest="batch_size")
    return p


def model_parser():
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--backbone", default="resnet50")
    p.add_argument("--neck-width", type=int, default=256, dest="neck_width")
    return p


def optim_parser():
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--iters", type=int, default=6)
    p.add_argument("--amp", action="store_true", default=True)
    return p


def conv_bn_act(cin, cout, k=1, s=1):
    return nn.Sequential(nn.Conv2d(cin, cout, k, s, k // 2, bias=False), nn.BatchNorm2d(cout), nn.SiLU(inplace=True))


class PAN(nn.Module):
    def __init__(self, in_chs, w):
        super().__init__()
        self.lateral = nn.ModuleList([conv_bn_act(c, w) for c in in_chs])
        self.td = nn.ModuleList([nn.Sequential(conv_bn_act(2 * w, w), conv_bn_act(w, w, 3)) for _ in in_chs[:-1]])
        self.down = nn.ModuleList([conv_bn_act(w, w, 3, 2) for _ in in_chs[:-1]])
        self.bu = nn.ModuleList([nn.Sequential(conv_bn_act(2 * w, w), conv_bn_act(w, w, 3)) for _ in in_chs[:-1]])

    def forward(self, feats):
        lat = [l(f) for l, f in zip(self.lateral, feats)]
        # top-down
        outs = [lat[-1]]
        for i in range(len(lat) - 2, -1, -1):
            up = F.interpolate(outs[0], size=lat[i].shape[-2:], mode="nearest")
            outs.insert(0, self.td[i](torch.cat([lat[i], up], 1)))
        # bottom-up
        res = [outs[0]]
        for i in range(1, len(outs)):
            res.append(self.bu[i - 1](torch.cat([self.down[i - 1](res[-1]), outs[i]], 1)))
        return res


class DecoupledHead(nn.Module):
    def __init__(self, w, num_classes):
        super().__init__()
        self.stem = conv_bn_act(w, w)
        self.cls = nn.Sequential(conv_bn_act(w, w, 3), conv_bn_act(w, w, 3), nn.Conv2d(w, num_classes, 1))
        self.reg = nn.Sequential(conv_bn_act(w, w, 3), conv_bn_act(w, w, 3))
        self.box = nn.Conv2d(w, 4, 1)
        self.obj = nn.Conv2d(w, 1, 1)

    def forward(self, x):
        x = self.stem(x)
        r = self.reg(x)
        return self.cls(x), self.box(r), self.obj(r)


class Detector(nn.Module):
    def __init__(self, backbone, num_classes, w):
        super().__init__()
        self.backbone = timm.create_model(backbone, pretrained=False, features_only=True, out_indices=(2, 3, 4))
        chs = self.backbone.feature_info.channels()
        self.neck = PAN(chs, w)
        self.heads = nn.ModuleList([DecoupledHead(w, num_classes) for _ in chs])

    def forward(self, x):
        return [h(f) for h, f in zip(self.heads, self.neck(self.backbone(x)))]


def fake_targets(outputs, num_classes, device):
    """Random dense targets per level: objectness map, class ids and boxes (ltrb distances)."""
    tg = []
    for cls, box, obj in outputs:
        B, _, H, W = obj.shape
        o = (torch.rand(B, 1, H, W, device=device) < 0.02).float()
        c = torch.randint(0, num_classes, (B, H, W), device=device)
        b = torch.rand(B, 4, H, W, device=device) * 4
        tg.append((o, c, b))
    return tg


def yolo_loss(outputs, targets, num_classes):
    total = 0.0
    for (cls, box, obj), (o, c, b) in zip(outputs, targets):
        total = total + F.binary_cross_entropy_with_logits(obj, o)
        pos = o[:, 0] > 0
        if pos.any():
            cls_p = cls.permute(0, 2, 3, 1)[pos]
            cls_t = F.one_hot(c[pos], num_classes).to(cls_p.dtype)
            total = total + F.binary_cross_entropy_with_logits(cls_p, cls_t)
            total = total + 5.0 * F.l1_loss(box.permute(0, 2, 3, 1)[pos].float().exp(), b.permute(0, 2, 3, 1)[pos])
    return total


def main():
    parser = argparse.ArgumentParser(description="yolo-ish", parents=[data_parser(), model_parser(), optim_parser()])
    args = parser.parse_args()
    device = torch.device("cuda")
    model = Detector(args.backbone, args.num_classes, args.neck_width).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.937, nesterov=True, weight_decay=5e-4)
    scaler = torch.amp.GradScaler("cuda", enabled=args.amp)
    for epoch in range(args.epochs):
        for it in range(args.iters):
            imgs = torch.rand(args.batch_size, 3, args.img_size, args.img_size, device=device)
            with torch.autocast("cuda", dtype=torch.float16, enabled=args.amp):
                outs = model(imgs)
                loss = yolo_loss(outs, fake_targets(outs, args.num_classes, device), args.num_classes)
            opt.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.unscale_(opt)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 10.0)
            scaler.step(opt)
            scaler.update()
            print(f"epoch {epoch} iter {it} loss {loss.item():.3f}")
    print(f"max_memory_allocated {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
