"""Glow (Kingma & Dhariwal 2018) on 64x64 images: multi-scale flow with ActNorm, invertible 1x1 convs
(LU-decomposed) and affine coupling layers, trained by maximum likelihood (bits per dimension).

Architecture and training sizes are read from configs/glow_celeba64.json (relative to the working dir).
Each flow step is wrapped in torch.utils.checkpoint to trade compute for activation memory.
"""
import json
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint
from torch.utils.data import DataLoader, Dataset

with open("configs/glow_celeba64.json") as fh:
    cfg = json.load(fh)
logabs = lambda x: torch.log(torch.abs(x))


class ActNorm(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.loc = nn.Parameter(torch.zeros(1, c, 1, 1))
        self.scale = nn.Parameter(torch.ones(1, c, 1, 1))
        self.register_buffer("initialized", torch.tensor(0, dtype=torch.uint8))

    @torch.no_grad()
    def initialize(self, x):
        flat = x.permute(1, 0, 2, 3).contiguous().view(x.shape[1], -1)
        self.loc.data.copy_(-flat.mean(1).view(1, -1, 1, 1))
        self.scale.data.copy_(1 / (flat.std(1).view(1, -1, 1, 1) + 1e-6))

    def forward(self, x):
        _, _, h, w = x.shape
        if self.initialized.item() == 0:
            self.initialize(x)
            self.initialized.fill_(1)
        logdet = h * w * torch.sum(logabs(self.scale))
        return self.scale * (x + self.loc), logdet


class InvConv2dLU(nn.Module):
    def __init__(self, c):
        super().__init__()
        w = np.linalg.qr(np.random.randn(c, c))[0].astype(np.float32)
        p, l, u = [torch.from_numpy(a) for a in _lu(w)]
        s = torch.diag(u)
        self.register_buffer("w_p", p)
        self.register_buffer("u_mask", torch.triu(torch.ones(c, c), 1))
        self.register_buffer("l_mask", self.u_mask.T.clone())
        self.register_buffer("s_sign", torch.sign(s))
        self.register_buffer("l_eye", torch.eye(c))
        self.w_l = nn.Parameter(l)
        self.w_s = nn.Parameter(logabs(s))
        self.w_u = nn.Parameter(torch.triu(u, 1))

    def weight(self):
        w = self.w_p @ (self.w_l * self.l_mask + self.l_eye) @ (
            (self.w_u * self.u_mask) + torch.diag(self.s_sign * torch.exp(self.w_s)))
        return w.unsqueeze(2).unsqueeze(3)

    def forward(self, x):
        _, _, h, w = x.shape
        return F.conv2d(x, self.weight()), h * w * torch.sum(self.w_s)


def _lu(a):
    """plain Doolittle LU with partial pivoting, returns P, L, U with a = P @ L @ U"""
    n = a.shape[0]
    u, l, p = a.copy(), np.eye(n, dtype=a.dtype), np.eye(n, dtype=a.dtype)
    for k in range(n - 1):
        i = np.argmax(np.abs(u[k:, k])) + k
        u[[k, i], k:] = u[[i, k], k:]
        l[[k, i], :k] = l[[i, k], :k]
        p[[k, i], :] = p[[i, k], :]
        for j in range(k + 1, n):
            l[j, k] = u[j, k] / u[k, k]
            u[j, k:] -= l[j, k] * u[k, k:]
    return p.T, l, u


class ZeroConv2d(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, 3, padding=0)
        self.conv.weight.data.zero_()
        self.conv.bias.data.zero_()
        self.scale = nn.Parameter(torch.zeros(1, c_out, 1, 1))

    def forward(self, x):
        return self.conv(F.pad(x, [1, 1, 1, 1], value=1)) * torch.exp(self.scale * 3)


class AffineCoupling(nn.Module):
    def __init__(self, c, hidden):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(c // 2, hidden, 3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(hidden, hidden, 1), nn.ReLU(inplace=True),
            ZeroConv2d(hidden, c),
        )
        self.net[0].weight.data.normal_(0, 0.05)
        self.net[0].bias.data.zero_()
        self.net[2].weight.data.normal_(0, 0.05)
        self.net[2].bias.data.zero_()

    def forward(self, x):
        in_a, in_b = x.chunk(2, 1)
        log_s, t = self.net(in_a).chunk(2, 1)
        s = torch.sigmoid(log_s + 2)
        out_b = (in_b + t) * s
        logdet = torch.sum(torch.log(s).view(x.shape[0], -1), 1)
        return torch.cat([in_a, out_b], 1), logdet


class FlowStep(nn.Module):
    def __init__(self, c, hidden):
        super().__init__()
        self.actnorm, self.invconv, self.coupling = ActNorm(c), InvConv2dLU(c), AffineCoupling(c, hidden)

    def forward(self, x):
        x, ld0 = self.actnorm(x)
        x, ld1 = self.invconv(x)
        x, ld2 = self.coupling(x)
        return x, ld0 + ld1 + ld2


def gaussian_log_p(x, mean, log_sd):
    return -0.5 * math.log(2 * math.pi) - log_sd - 0.5 * (x - mean) ** 2 / torch.exp(2 * log_sd)


class Block(nn.Module):
    def __init__(self, c, n_flow, hidden, split=True, use_ckpt=True):
        super().__init__()
        sq = c * 4
        self.flows = nn.ModuleList([FlowStep(sq, hidden) for _ in range(n_flow)])
        self.split, self.use_ckpt = split, use_ckpt
        self.prior = ZeroConv2d(c * 2, c * 4) if split else ZeroConv2d(c * 4, c * 8)

    def forward(self, x):
        b, c, h, w = x.shape
        out = x.view(b, c, h // 2, 2, w // 2, 2).permute(0, 1, 3, 5, 2, 4).contiguous().view(b, c * 4, h // 2, w // 2)
        logdet = 0
        for flow in self.flows:
            if self.use_ckpt and self.training and flow.actnorm.initialized.item() == 1:
                out, det = checkpoint(flow, out, use_reentrant=False)
            else:
                out, det = flow(out)
            logdet = logdet + det
        if self.split:
            out, z_new = out.chunk(2, 1)
            mean, log_sd = self.prior(out).chunk(2, 1)
        else:
            z_new = out
            mean, log_sd = self.prior(torch.zeros_like(out)).chunk(2, 1)
        log_p = gaussian_log_p(z_new, mean, log_sd).view(b, -1).sum(1)
        return out, logdet, log_p


class Glow(nn.Module):
    def __init__(self, in_ch, n_flow, n_block, hidden, use_ckpt):
        super().__init__()
        self.blocks = nn.ModuleList()
        c = in_ch
        for i in range(n_block - 1):
            self.blocks.append(Block(c, n_flow, hidden, split=True, use_ckpt=use_ckpt))
            c *= 2
        self.blocks.append(Block(c, n_flow, hidden, split=False, use_ckpt=use_ckpt))

    def forward(self, x):
        log_p_sum, logdet = 0, 0
        out = x
        for block in self.blocks:
            out, det, log_p = block(out)
            logdet = logdet + det
            log_p_sum = log_p_sum + log_p
        return log_p_sum, logdet


class FakeFaces(Dataset):
    def __init__(self, n, size):
        self.n, self.size = n, size

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.rand(3, self.size, self.size)


def main():
    m, t = cfg["model"], cfg["train"]
    device = "cuda"
    n_bins = 2.0 ** t["n_bits"]
    model = Glow(3, m["n_flow"], m["n_block"], m["hidden"], m["checkpoint"]).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=t["lr"])
    loader = DataLoader(FakeFaces(t["batch_size"] * t["steps"], t["img_size"]), batch_size=t["batch_size"],
                        shuffle=True, num_workers=4, drop_last=True)
    n_pixel = t["img_size"] * t["img_size"] * 3
    # data-dependent ActNorm initialisation on one batch, before training
    with torch.no_grad():
        init = next(iter(loader)).to(device)
        init = torch.floor(init * 255 / 2 ** (8 - t["n_bits"])) / n_bins - 0.5
        model(init + torch.rand_like(init) / n_bins)
        del init
    model.train()
    for i, image in enumerate(loader):
        image = image.to(device)
        image = torch.floor(image * 255 / 2 ** (8 - t["n_bits"])) / n_bins - 0.5
        log_p, logdet = model(image + torch.rand_like(image) / n_bins)
        logdet = logdet.mean()
        loss = -math.log(n_bins) * n_pixel + logdet + log_p.mean()
        bpd = -loss / (math.log(2) * n_pixel)
        optimizer.zero_grad()
        bpd.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 50.0)
        optimizer.step()
        print(f"iter {i}: bpd {bpd.item():.3f}")


if __name__ == "__main__":
    main()
