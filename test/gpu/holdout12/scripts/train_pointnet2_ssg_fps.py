"""PointNet++ (single-scale grouping) classification on random point clouds.

Farthest point sampling, ball query and grouping written by hand (no CUDA extensions), as in the
popular pure-PyTorch reimplementations.
"""
import dataclasses
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


@dataclass
class Hparams:
    num_points: int = 4096
    num_classes: int = 40
    batch_size: int = 16
    lr: float = 1e-3
    epochs: int = 1
    steps_per_epoch: int = 5
    sa1_npoint: int = 1024
    sa1_radius: float = 0.1
    sa2_npoint: int = 256
    sa2_radius: float = 0.2
    nsample: int = 32


BASE = Hparams()
# the run we actually want: bigger batch than the default
HP = dataclasses.replace(BASE, batch_size=24, sa1_npoint=1024)


def square_distance(src, dst):
    # src (B, N, C), dst (B, M, C) -> (B, N, M)
    return (src.pow(2).sum(-1, keepdim=True) - 2 * src @ dst.transpose(1, 2)
            + dst.pow(2).sum(-1).unsqueeze(1))


def index_points(points, idx):
    # points (B, N, C), idx (B, S) or (B, S, K)
    B = points.shape[0]
    batch = torch.arange(B, device=points.device).view(B, *([1] * (idx.dim() - 1))).expand_as(idx)
    return points[batch, idx]


def farthest_point_sample(xyz, npoint):
    B, N, _ = xyz.shape
    centroids = torch.zeros(B, npoint, dtype=torch.long, device=xyz.device)
    distance = torch.full((B, N), 1e10, device=xyz.device)
    farthest = torch.randint(0, N, (B,), device=xyz.device)
    batch = torch.arange(B, device=xyz.device)
    for i in range(npoint):
        centroids[:, i] = farthest
        centroid = xyz[batch, farthest].unsqueeze(1)
        dist = ((xyz - centroid) ** 2).sum(-1)
        distance = torch.minimum(distance, dist)
        farthest = distance.argmax(-1)
    return centroids


def query_ball_point(radius, nsample, xyz, new_xyz):
    B, N, _ = xyz.shape
    S = new_xyz.shape[1]
    group_idx = torch.arange(N, device=xyz.device).view(1, 1, N).repeat(B, S, 1)
    sqrdists = square_distance(new_xyz, xyz)
    group_idx[sqrdists > radius ** 2] = N
    group_idx = group_idx.sort(dim=-1)[0][:, :, :nsample]
    first = group_idx[:, :, :1].repeat(1, 1, nsample)
    mask = group_idx == N
    group_idx[mask] = first[mask]
    return group_idx


class SetAbstraction(nn.Module):
    def __init__(self, npoint, radius, nsample, in_ch, mlp, group_all=False):
        super().__init__()
        self.npoint, self.radius, self.nsample, self.group_all = npoint, radius, nsample, group_all
        layers = []
        last = in_ch + 3
        for out in mlp:
            layers += [nn.Conv2d(last, out, 1), nn.BatchNorm2d(out), nn.ReLU(inplace=True)]
            last = out
        self.mlp = nn.Sequential(*layers)

    def forward(self, xyz, points):
        if self.group_all:
            new_xyz = xyz.mean(1, keepdim=True)
            grouped = torch.cat([xyz, points], -1).unsqueeze(1) if points is not None else xyz.unsqueeze(1)
        else:
            with torch.no_grad():
                fps_idx = farthest_point_sample(xyz, self.npoint)
                new_xyz = index_points(xyz, fps_idx)
                idx = query_ball_point(self.radius, self.nsample, xyz, new_xyz)
            grouped_xyz = index_points(xyz, idx) - new_xyz.unsqueeze(2)
            if points is not None:
                grouped = torch.cat([grouped_xyz, index_points(points, idx)], -1)
            else:
                grouped = grouped_xyz
        grouped = grouped.permute(0, 3, 2, 1)   # (B, C, K, S)
        feat = self.mlp(grouped)
        feat = feat.max(2)[0].transpose(1, 2)   # (B, S, C)
        return new_xyz, feat


class PointNet2Cls(nn.Module):
    def __init__(self, hp: Hparams):
        super().__init__()
        self.sa1 = SetAbstraction(hp.sa1_npoint, hp.sa1_radius, hp.nsample, 0, [64, 64, 128])
        self.sa2 = SetAbstraction(hp.sa2_npoint, hp.sa2_radius, hp.nsample * 2, 128, [128, 128, 256])
        self.sa3 = SetAbstraction(None, None, None, 256, [256, 512, 1024], group_all=True)
        self.head = nn.Sequential(
            nn.Linear(1024, 512), nn.BatchNorm1d(512), nn.ReLU(True), nn.Dropout(0.4),
            nn.Linear(512, 256), nn.BatchNorm1d(256), nn.ReLU(True), nn.Dropout(0.4),
            nn.Linear(256, hp.num_classes),
        )

    def forward(self, xyz):
        l1_xyz, l1 = self.sa1(xyz, None)
        l2_xyz, l2 = self.sa2(l1_xyz, l1)
        _, l3 = self.sa3(l2_xyz, l2)
        return self.head(l3.squeeze(1))


class RandomClouds(Dataset):
    def __init__(self, n, num_points, num_classes):
        self.n, self.num_points, self.num_classes = n, num_points, num_classes

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        pts = torch.rand(self.num_points, 3) * 2 - 1
        return pts, torch.randint(0, self.num_classes, ()).item()


def main(hp=HP):
    dev = "cuda"
    model = PointNet2Cls(hp).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=hp.lr, weight_decay=1e-4)
    loader = DataLoader(RandomClouds(hp.batch_size * hp.steps_per_epoch, hp.num_points, hp.num_classes),
                        batch_size=hp.batch_size, shuffle=True, drop_last=True, num_workers=2)
    for epoch in range(hp.epochs):
        model.train()
        for i, (pts, label) in enumerate(loader):
            pts, label = pts.to(dev), label.to(dev)
            logits = model(pts)
            loss = F.cross_entropy(logits, label, label_smoothing=0.2)
            opt.zero_grad()
            loss.backward()
            opt.step()
            print(f"epoch {epoch} it {i} loss {loss.item():.3f}")
    print("peak GiB", torch.cuda.max_memory_allocated() / 2 ** 30)


if __name__ == "__main__":
    main()
