"""PixelCNN density model on 32x32 colour images: a mask-A 7x7 masked convolution, a stack of residual
blocks with mask-B 3x3 masked convolutions, and a 256-way softmax for every sub-pixel. The masks are
buffers multiplied into the weights before each convolution. After training, draws the first rows of a
few samples pixel by pixel (iterative decoding, no_grad).

    python train_pixelcnn_masked_conv.py --dataset cifar10 -b 128 --hidden 128 --layers 15
"""
import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

DATASETS = {"cifar10": dict(image_size=32, channels=3), "imagenet32": dict(image_size=32, channels=3),
            "mnist": dict(image_size=28, channels=1)}


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--dataset", choices=list(DATASETS), default="cifar10")
    p.add_argument("-b", type=int, default=128, dest="batch_size")
    p.add_argument("--hidden", type=int, default=128, dest="hidden_channels")
    p.add_argument("--layers", type=int, default=15, dest="n_res_blocks")
    p.add_argument("--levels", type=int, default=256, dest="n_levels")
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--sample-rows", type=int, default=2)
    return p.parse_args()


class MaskedConv2d(nn.Conv2d):
    def __init__(self, mask_type, *args, **kwargs):
        super().__init__(*args, **kwargs)
        assert mask_type in ("A", "B")
        self.register_buffer("mask", torch.ones_like(self.weight))
        _, _, kh, kw = self.weight.shape
        self.mask[:, :, kh // 2, kw // 2 + (mask_type == "B"):] = 0
        self.mask[:, :, kh // 2 + 1:] = 0

    def forward(self, x):
        return F.conv2d(x, self.weight * self.mask, self.bias, self.stride, self.padding)


class ResidualBlock(nn.Module):
    def __init__(self, h):
        super().__init__()
        self.net = nn.Sequential(
            nn.ReLU(), nn.Conv2d(2 * h, h, 1), nn.BatchNorm2d(h),
            nn.ReLU(), MaskedConv2d("B", h, h, 3, padding=1), nn.BatchNorm2d(h),
            nn.ReLU(), nn.Conv2d(h, 2 * h, 1), nn.BatchNorm2d(2 * h),
        )

    def forward(self, x):
        return x + self.net(x)


class PixelCNN(nn.Module):
    def __init__(self, channels, hidden, n_blocks, n_levels):
        super().__init__()
        self.channels, self.n_levels = channels, n_levels
        self.input_conv = MaskedConv2d("A", channels, 2 * hidden, 7, padding=3)
        self.blocks = nn.Sequential(*[ResidualBlock(hidden) for _ in range(n_blocks)])
        self.output = nn.Sequential(nn.ReLU(), MaskedConv2d("B", 2 * hidden, 2 * hidden, 1), nn.ReLU(),
                                    nn.Conv2d(2 * hidden, channels * n_levels, 1))

    def forward(self, x):
        B, C, H, W = x.shape
        out = self.output(self.blocks(self.input_conv(x)))
        return out.view(B, self.n_levels, C, H, W)          # logits over intensity levels


def main():
    args = get_args()
    ds = DATASETS[args.dataset]
    C, S = ds["channels"], ds["image_size"]
    device = "cuda"
    model = PixelCNN(C, args.hidden_channels, args.n_res_blocks, args.n_levels).to(device)
    print(f"{sum(p.numel() for p in model.parameters()) / 1e6:.2f}M params")
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.999995)

    t0 = time.time()
    model.train()
    for step in range(args.steps):
        pixels = torch.randint(0, args.n_levels, (args.batch_size, C, S, S), device=device)
        x = pixels.float() / (args.n_levels - 1) * 2 - 1
        logits = model(x)
        loss = F.cross_entropy(logits, pixels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        bpd = loss.item() / torch.log(torch.tensor(2.0)).item()
        print(f"step {step} nll {loss.item():.3f} ({bpd:.2f} bits/dim)")

    # autoregressive sampling of the first rows
    model.eval()
    n = 16
    sample = torch.zeros(n, C, S, S, device=device)
    with torch.no_grad():
        for i in range(args.sample_rows):
            for j in range(S):
                probs = F.softmax(model(sample)[:, :, :, i, j], dim=1)     # (n, levels, C)
                for c in range(C):
                    level = torch.multinomial(probs[:, :, c], 1).squeeze(1)
                    sample[:, c, i, j] = level.float() / (args.n_levels - 1) * 2 - 1
    print(f"sampled {args.sample_rows} rows ({time.time() - t0:.1f}s), peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
