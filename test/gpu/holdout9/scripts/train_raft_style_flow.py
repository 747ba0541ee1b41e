"""Optical flow with a RAFT-small-style model: feature / context encoders at 1/8 resolution, an all-pairs
correlation pyramid, and a ConvGRU update operator applied `iters` times; every iteration's upsampled flow
goes into the sequence loss.

    python train_raft_style_flow.py --stage chairs            # 368x496 crops, batch 10, 12 iterations
    python train_raft_style_flow.py --stage things --iters 16
"""
import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

STAGES = {
    "chairs": dict(image_size=(368, 496), batch_size=10, lr=4e-4, iters=12, wdecay=1e-4),
    "things": dict(image_size=(400, 720), batch_size=6, lr=1.25e-4, iters=12, wdecay=1e-4),
    "sintel": dict(image_size=(368, 768), batch_size=6, lr=1.25e-4, iters=12, wdecay=1e-5),
}


def get_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--stage", choices=sorted(STAGES), default="chairs")
    parser.add_argument("--batch_size", type=int)
    parser.add_argument("--image_size", type=int, nargs=2)
    parser.add_argument("--iters", type=int)
    parser.add_argument("--lr", type=float)
    parser.add_argument("--wdecay", type=float)
    parser.add_argument("--num_steps", type=int, default=6)
    parser.add_argument("--gamma", type=float, default=0.8)
    parser.add_argument("--corr_levels", type=int, default=4)
    parser.add_argument("--corr_radius", type=int, default=3)
    first, _ = parser.parse_known_args()
    parser.set_defaults(**STAGES[first.stage])
    return parser.parse_args()


class ResBlock(nn.Module):
    def __init__(self, c_in, c_out, stride, norm):
        super().__init__()
        Norm = {"instance": nn.InstanceNorm2d, "batch": nn.BatchNorm2d, "none": lambda c: nn.Identity()}[norm]
        self.conv1 = nn.Conv2d(c_in, c_out, 3, stride, 1)
        self.conv2 = nn.Conv2d(c_out, c_out, 3, 1, 1)
        self.n1, self.n2 = Norm(c_out), Norm(c_out)
        self.down = None
        if stride != 1 or c_in != c_out:
            self.down = nn.Sequential(nn.Conv2d(c_in, c_out, 1, stride), Norm(c_out))

    def forward(self, x):
        y = F.relu(self.n1(self.conv1(x)))
        y = F.relu(self.n2(self.conv2(y)))
        return F.relu((x if self.down is None else self.down(x)) + y)


class SmallEncoder(nn.Module):
    def __init__(self, out_dim, norm):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 32, 7, 2, 3)
        self.layers = nn.Sequential(ResBlock(32, 32, 1, norm), ResBlock(32, 32, 1, norm),
                                    ResBlock(32, 64, 2, norm), ResBlock(64, 64, 1, norm),
                                    ResBlock(64, 96, 2, norm), ResBlock(96, 96, 1, norm))
        self.conv2 = nn.Conv2d(96, out_dim, 1)

    def forward(self, x):
        return self.conv2(self.layers(F.relu(self.conv1(x))))


class CorrBlock:
    def __init__(self, fmap1, fmap2, num_levels, radius):
        B, D, H, W = fmap1.shape
        self.num_levels, self.radius = num_levels, radius
        corr = torch.matmul(fmap1.view(B, D, H * W).transpose(1, 2), fmap2.view(B, D, H * W))
        corr = corr.view(B * H * W, 1, H, W) / D ** 0.5
        self.pyramid = [corr]
        for _ in range(num_levels - 1):
            corr = F.avg_pool2d(corr, 2, stride=2)
            self.pyramid.append(corr)

    def __call__(self, coords):
        r = self.radius
        B, _, H, W = coords.shape
        coords = coords.permute(0, 2, 3, 1)
        d = torch.linspace(-r, r, 2 * r + 1, device=coords.device)
        delta = torch.stack(torch.meshgrid(d, d, indexing="ij"), dim=-1).flip(-1)   # (2r+1, 2r+1, 2) as (x, y)
        out = []
        for i, corr in enumerate(self.pyramid):
            h, w = corr.shape[-2:]
            centroid = coords.reshape(B * H * W, 1, 1, 2) / 2 ** i
            grid = centroid + delta
            gx = 2 * grid[..., 0] / (w - 1) - 1
            gy = 2 * grid[..., 1] / (h - 1) - 1
            sampled = F.grid_sample(corr, torch.stack([gx, gy], -1), align_corners=True)
            out.append(sampled.view(B, H, W, -1))
        return torch.cat(out, dim=-1).permute(0, 3, 1, 2).contiguous()


class ConvGRU(nn.Module):
    def __init__(self, hidden, inp):
        super().__init__()
        self.convz = nn.Conv2d(hidden + inp, hidden, 3, padding=1)
        self.convr = nn.Conv2d(hidden + inp, hidden, 3, padding=1)
        self.convq = nn.Conv2d(hidden + inp, hidden, 3, padding=1)

    def forward(self, h, x):
        hx = torch.cat([h, x], 1)
        z = torch.sigmoid(self.convz(hx))
        r = torch.sigmoid(self.convr(hx))
        q = torch.tanh(self.convq(torch.cat([r * h, x], 1)))
        return (1 - z) * h + z * q


class UpdateBlock(nn.Module):
    def __init__(self, cor_planes, hidden=96, context=64):
        super().__init__()
        self.convc1 = nn.Conv2d(cor_planes, 96, 1)
        self.convf1 = nn.Conv2d(2, 64, 7, padding=3)
        self.convf2 = nn.Conv2d(64, 32, 3, padding=1)
        self.conv = nn.Conv2d(128, 80, 3, padding=1)
        self.gru = ConvGRU(hidden, 82 + context)
        self.flow_head = nn.Sequential(nn.Conv2d(hidden, 128, 3, padding=1), nn.ReLU(inplace=True),
                                       nn.Conv2d(128, 2, 3, padding=1))

    def forward(self, net, inp, corr, flow):
        c = F.relu(self.convc1(corr))
        f = F.relu(self.convf2(F.relu(self.convf1(flow))))
        motion = torch.cat([F.relu(self.conv(torch.cat([c, f], 1))), flow], 1)
        net = self.gru(net, torch.cat([inp, motion], 1))
        return net, self.flow_head(net)


class RAFTSmall(nn.Module):
    hidden_dim, context_dim = 96, 64

    def __init__(self, corr_levels=4, corr_radius=3):
        super().__init__()
        self.corr_levels, self.corr_radius = corr_levels, corr_radius
        self.fnet = SmallEncoder(128, "instance")
        self.cnet = SmallEncoder(self.hidden_dim + self.context_dim, "none")
        self.update = UpdateBlock(corr_levels * (2 * corr_radius + 1) ** 2, self.hidden_dim, self.context_dim)

    @staticmethod
    def coords_grid(B, H, W, device):
        y, x = torch.meshgrid(torch.arange(H, device=device), torch.arange(W, device=device), indexing="ij")
        return torch.stack([x, y], 0).float()[None].repeat(B, 1, 1, 1)

    def forward(self, img1, img2, iters=12):
        B = img1.shape[0]
        fmap1, fmap2 = self.fnet(torch.cat([img1, img2], 0)).split(B)
        corr_fn = CorrBlock(fmap1, fmap2, self.corr_levels, self.corr_radius)
        net, inp = self.cnet(img1).split([self.hidden_dim, self.context_dim], 1)
        net, inp = torch.tanh(net), F.relu(inp)
        _, _, H, W = fmap1.shape
        coords0 = self.coords_grid(B, H, W, img1.device)
        coords1 = coords0.clone()
        predictions = []
        for _ in range(iters):
            coords1 = coords1.detach()
            corr = corr_fn(coords1)
            net, delta = self.update(net, inp, corr, coords1 - coords0)
            coords1 = coords1 + delta
            flow_up = 8 * F.interpolate(coords1 - coords0, scale_factor=8, mode="bilinear", align_corners=True)
            predictions.append(flow_up)
        return predictions


def sequence_loss(preds, gt, valid, gamma):
    n = len(preds)
    loss = 0.0
    for i, p in enumerate(preds):
        loss = loss + gamma ** (n - i - 1) * (valid[:, None] * (p - gt).abs()).mean()
    epe = torch.sum((preds[-1] - gt) ** 2, dim=1).sqrt()[valid.bool()].mean()
    return loss, epe


class FlyingPairs(Dataset):
    def __init__(self, n, size):
        self.n, self.size = n, size

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        H, W = self.size
        img1 = torch.rand(3, H, W) * 2 - 1
        img2 = torch.roll(img1, shifts=(2, 3), dims=(1, 2))
        flow = torch.randn(2, H, W) * 5
        valid = (torch.rand(H, W) > 0.05).float()
        return img1, img2, flow, valid


def main():
    args = get_args()
    print(vars(args))
    device = "cuda"
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    model = RAFTSmall(args.corr_levels, args.corr_radius).to(device)
    print(f"{sum(p.numel() for p in model.parameters()) / 1e6:.2f}M params")
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=args.wdecay, eps=1e-8)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, args.lr, args.num_steps + 100, pct_start=0.05,
                                                cycle_momentum=False, anneal_strategy="linear")
    loader = DataLoader(FlyingPairs(args.batch_size * args.num_steps, tuple(args.image_size)),
                        batch_size=args.batch_size, shuffle=True, num_workers=4, drop_last=True)
    model.train()
    t0 = time.time()
    for step, (img1, img2, flow, valid) in enumerate(loader):
        img1, img2, flow, valid = (t.to(device) for t in (img1, img2, flow, valid))
        preds = model(img1, img2, iters=args.iters)
        loss, epe = sequence_loss(preds, flow, valid, args.gamma)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        print(f"step {step} loss {loss.item():.3f} epe {epe.item():.2f} ({time.time() - t0:.1f}s)")
    print(f"peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
