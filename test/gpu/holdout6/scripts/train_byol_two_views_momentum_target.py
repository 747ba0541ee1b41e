"""BYOL self-supervised pre-training: online ResNet-50 + projector + predictor, momentum (EMA) target network,
two augmented views per image, symmetric loss. bf16 autocast, LARS-free SGD with cosine momentum schedule."""
import copy
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from torchvision.models import resnet50

BATCH = 192
RES = 192
PROJ_DIM = 256
HIDDEN = 4096
BASE_TAU = 0.996
STEPS = 8


def mlp(in_dim, hidden=HIDDEN, out=PROJ_DIM):
    return nn.Sequential(nn.Linear(in_dim, hidden), nn.BatchNorm1d(hidden), nn.ReLU(inplace=True), nn.Linear(hidden, out))


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        net = resnet50(weights=None)
        net.fc = nn.Identity()
        self.backbone = net
        self.projector = mlp(2048)

    def forward(self, x):
        return self.projector(self.backbone(x))


class TwoViews(Dataset):
    """Stands in for two random-resized-crop / color-jitter views of one image."""

    def __len__(self):
        return BATCH * STEPS

    def __getitem__(self, i):
        img = torch.rand(3, RES + 32, RES + 32)
        a, b = torch.randint(0, 32, (2,)).tolist()
        v1 = img[:, a:a + RES, b:b + RES]
        v2 = torch.flip(img[:, b:b + RES, a:a + RES], dims=[2]) * 0.8
        return v1, v2


def regression_loss(p, z):
    return 2 - 2 * F.cosine_similarity(p, z.detach(), dim=-1).mean()


online = Encoder().cuda()
predictor = mlp(PROJ_DIM).cuda()
target = copy.deepcopy(online)
for p in target.parameters():
    p.requires_grad = False

params = list(online.parameters()) + list(predictor.parameters())
optimizer = torch.optim.SGD(params, lr=0.3, momentum=0.9, weight_decay=1.5e-6)
loader = DataLoader(TwoViews(), batch_size=BATCH, shuffle=True, num_workers=4, drop_last=True)

for step, (v1, v2) in enumerate(loader):
    v1, v2 = v1.cuda(non_blocking=True), v2.cuda(non_blocking=True)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        p1, p2 = predictor(online(v1)), predictor(online(v2))
        with torch.no_grad():
            z1, z2 = target(v1), target(v2)
        loss = regression_loss(p1, z2) + regression_loss(p2, z1)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    tau = 1 - (1 - BASE_TAU) * (math.cos(math.pi * step / STEPS) + 1) / 2
    with torch.no_grad():
        for po, pt in zip(online.parameters(), target.parameters()):
            pt.mul_(tau).add_(po.detach(), alpha=1 - tau)
    print(f"step {step} loss {loss.item():.4f} tau {tau:.4f}")
