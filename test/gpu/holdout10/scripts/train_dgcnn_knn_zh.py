"""DGCNN 点云分类（ModelNet40 风格），EdgeConv 用 k 近邻（pairwise distance + topk）构图。

数据为随机点云，只用来验证训练流程和显存。
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


def knn(x, k):
    # x: (B, C, N)；返回每个点的 k 个最近邻下标 (B, N, k)
    inner = -2 * torch.matmul(x.transpose(2, 1), x)
    xx = torch.sum(x ** 2, dim=1, keepdim=True)
    pairwise_distance = -xx - inner - xx.transpose(2, 1)   # 负的平方距离
    idx = pairwise_distance.topk(k=k, dim=-1)[1]
    return idx


def get_graph_feature(x, k=20, idx=None):
    batch_size, num_dims, num_points = x.size()
    if idx is None:
        idx = knn(x, k=k)
    idx_base = torch.arange(0, batch_size, device=x.device).view(-1, 1, 1) * num_points
    idx = (idx + idx_base).view(-1)
    x = x.transpose(2, 1).contiguous()                     # (B, N, C)
    feature = x.view(batch_size * num_points, -1)[idx, :]
    feature = feature.view(batch_size, num_points, k, num_dims)
    x = x.view(batch_size, num_points, 1, num_dims).repeat(1, 1, k, 1)
    # 边特征：(x_j - x_i, x_i)
    feature = torch.cat((feature - x, x), dim=3).permute(0, 3, 1, 2).contiguous()
    return feature                                          # (B, 2C, N, k)


class DGCNN(nn.Module):
    def __init__(self, args, output_channels=40):
        super().__init__()
        self.k = args.k

        def edge_conv(cin, cout):
            return nn.Sequential(nn.Conv2d(cin * 2, cout, 1, bias=False), nn.BatchNorm2d(cout), nn.LeakyReLU(0.2))

        self.conv1 = edge_conv(3, 64)
        self.conv2 = edge_conv(64, 64)
        self.conv3 = edge_conv(64, 128)
        self.conv4 = edge_conv(128, 256)
        self.conv5 = nn.Sequential(nn.Conv1d(512, args.emb_dims, 1, bias=False), nn.BatchNorm1d(args.emb_dims),
                                   nn.LeakyReLU(0.2))
        self.head = nn.Sequential(
            nn.Linear(args.emb_dims * 2, 512, bias=False), nn.BatchNorm1d(512), nn.LeakyReLU(0.2), nn.Dropout(args.dropout),
            nn.Linear(512, 256), nn.BatchNorm1d(256), nn.LeakyReLU(0.2), nn.Dropout(args.dropout),
            nn.Linear(256, output_channels))

    def forward(self, x):
        x1 = self.conv1(get_graph_feature(x, k=self.k)).max(dim=-1)[0]
        x2 = self.conv2(get_graph_feature(x1, k=self.k)).max(dim=-1)[0]
        x3 = self.conv3(get_graph_feature(x2, k=self.k)).max(dim=-1)[0]
        x4 = self.conv4(get_graph_feature(x3, k=self.k)).max(dim=-1)[0]
        x = self.conv5(torch.cat((x1, x2, x3, x4), dim=1))
        x = torch.cat((F.adaptive_max_pool1d(x, 1).flatten(1), F.adaptive_avg_pool1d(x, 1).flatten(1)), 1)
        return self.head(x)


class RandomPointClouds(Dataset):
    def __init__(self, n, num_points):
        self.n, self.num_points = n, num_points

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        pts = torch.randn(self.num_points, 3)
        pts = pts / pts.norm(dim=1).max()                   # 归一化到单位球
        return pts, torch.randint(0, 40, ()).item()


def cal_loss(pred, gold, smoothing=0.2):
    # 标签平滑的交叉熵（和原仓库一致）
    n_class = pred.size(1)
    one_hot = torch.zeros_like(pred).scatter(1, gold.view(-1, 1), 1)
    one_hot = one_hot * (1 - smoothing) + (1 - one_hot) * smoothing / (n_class - 1)
    return -(one_hot * F.log_softmax(pred, dim=1)).sum(dim=1).mean()


def main():
    parser = argparse.ArgumentParser(description="Point Cloud Recognition")
    parser.add_argument("--batch_size", type=int, default=24)
    parser.add_argument("--num_points", type=int, default=2048)
    parser.add_argument("--k", type=int, default=20, help="近邻个数")
    parser.add_argument("--emb_dims", type=int, default=1024)
    parser.add_argument("--dropout", type=float, default=0.5)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--momentum", type=float, default=0.9)
    parser.add_argument("--steps", type=int, default=8)
    args = parser.parse_args()

    device = torch.device("cuda")
    model = DGCNN(args).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(opt, args.steps, eta_min=1e-3)
    loader = DataLoader(RandomPointClouds(args.batch_size * args.steps, args.num_points),
                        batch_size=args.batch_size, shuffle=True, drop_last=True, num_workers=2)
    model.train()
    for step, (data, label) in enumerate(loader):
        data, label = data.to(device).permute(0, 2, 1), label.to(device)  # (B, 3, N)
        opt.zero_grad()
        logits = model(data)
        loss = cal_loss(logits, label)
        loss.backward()
        opt.step()
        scheduler.step()
        print(f"step {step} loss {loss.item():.4f}")
    print("显存峰值 GiB:", torch.cuda.max_memory_allocated() / 2**30)


if __name__ == "__main__":
    main()
