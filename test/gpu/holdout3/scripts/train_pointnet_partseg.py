# PointNet part segmentation (ShapeNet-part style) with the two T-Nets.
# Synthetic point clouds; the real loader just returns (points, part labels) the same way.
from collections import OrderedDict
from functools import partial

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import Dataset, DataLoader

CFG = {
    "data": {"num_points": 4096, "num_parts": 50, "num_categories": 16},
    "train": {"batch_size": 32, "lr": 1e-3, "weight_decay": 1e-4, "steps": 5},
    "model": {"feat_dims": [64, 128, 1024], "seg_dims": [512, 256, 128], "feature_transform": True},
}

Norm1d = partial(nn.BatchNorm1d, eps=1e-3, momentum=0.01)


def shared_mlp(dims, prefix, last_act=True):
    layers = OrderedDict()
    for i in range(len(dims) - 1):
        layers[f"{prefix}_conv{i}"] = nn.Conv1d(dims[i], dims[i + 1], 1)
        if i < len(dims) - 2 or last_act:
            layers[f"{prefix}_bn{i}"] = Norm1d(dims[i + 1])
            layers[f"{prefix}_relu{i}"] = nn.ReLU(inplace=True)
    return nn.Sequential(layers)


class TNet(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.k = k
        self.mlp = shared_mlp([k, 64, 128, 1024], "tnet")
        self.fc = nn.Sequential(OrderedDict([
            ("fc1", nn.Linear(1024, 512)), ("bn1", Norm1d(512)), ("relu1", nn.ReLU(inplace=True)),
            ("fc2", nn.Linear(512, 256)), ("bn2", Norm1d(256)), ("relu2", nn.ReLU(inplace=True)),
            ("fc3", nn.Linear(256, k * k)),
        ]))
        nn.init.zeros_(self.fc.fc3.weight)
        nn.init.zeros_(self.fc.fc3.bias)

    def forward(self, x):  # x: B x k x N
        b = x.size(0)
        g = self.mlp(x).max(dim=2).values
        m = self.fc(g).view(b, self.k, self.k)
        return m + torch.eye(self.k, device=x.device).unsqueeze(0)


class PointNetPartSeg(nn.Module):
    def __init__(self, num_parts, num_categories, feat_dims, seg_dims, feature_transform=True):
        super().__init__()
        self.stn = TNet(3)
        self.conv1 = shared_mlp([3, feat_dims[0]], "c1")
        self.fstn = TNet(feat_dims[0]) if feature_transform else None
        self.conv2 = shared_mlp(feat_dims, "c2")
        self.num_categories = num_categories
        seg_in = feat_dims[0] + feat_dims[-1] + num_categories   # local + global + one-hot
        self.seg = shared_mlp([seg_in] + list(seg_dims), "seg")
        self.head = nn.Conv1d(seg_dims[-1], num_parts, 1)

    def forward(self, pts, cat):
        n = pts.size(2)
        trans = self.stn(pts)
        x = torch.bmm(trans, pts)
        local = self.conv1(x)
        trans_feat = None
        if self.fstn is not None:
            trans_feat = self.fstn(local)
            local = torch.bmm(trans_feat, local)
        g = self.conv2(local).max(dim=2, keepdim=True).values
        onehot = F.one_hot(cat, self.num_categories).float().unsqueeze(2)
        feats = torch.cat([local, g.expand(-1, -1, n), onehot.expand(-1, -1, n)], dim=1)
        return self.head(self.seg(feats)), trans_feat


def feature_transform_reg(m):
    eye = torch.eye(m.size(1), device=m.device).unsqueeze(0)
    return ((m @ m.transpose(1, 2) - eye) ** 2).sum(dim=(1, 2)).mean()


class FakeShapeNetPart(Dataset):
    def __init__(self, size, num_points, num_parts, num_categories):
        self.size, self.num_points = size, num_points
        self.num_parts, self.num_categories = num_parts, num_categories

    def __len__(self):
        return self.size

    def __getitem__(self, i):
        pts = np.random.randn(3, self.num_points).astype(np.float32)
        seg = np.random.randint(0, self.num_parts, self.num_points)
        return torch.from_numpy(pts), np.random.randint(self.num_categories), torch.from_numpy(seg)


def param_groups(model, weight_decay):
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        (no_decay if p.ndim < 2 or "bn" in name else decay).append(p)
    return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]


if __name__ == "__main__":
    dcfg, tcfg, mcfg = CFG["data"], CFG["train"], CFG["model"]
    device = "cuda"
    model = PointNetPartSeg(dcfg["num_parts"], dcfg["num_categories"], **mcfg).to(device)
    opt = torch.optim.AdamW(param_groups(model, tcfg["weight_decay"]), lr=tcfg["lr"])
    ds = FakeShapeNetPart(tcfg["batch_size"] * tcfg["steps"], dcfg["num_points"], dcfg["num_parts"],
                          dcfg["num_categories"])
    dl = DataLoader(ds, batch_size=tcfg["batch_size"], shuffle=True, drop_last=True)

    model.train()
    for it, (pts, cat, seg) in enumerate(dl):
        pts, cat, seg = pts.to(device), cat.to(device), seg.to(device)
        logits, trans_feat = model(pts, cat)
        loss = F.cross_entropy(logits, seg)
        if trans_feat is not None:
            loss = loss + 1e-3 * feature_transform_reg(trans_feat)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("iter %d  loss %.4f" % (it, loss.item()))
    print("peak", torch.cuda.max_memory_allocated() / 2**30, "GiB")
