"""Instant-NGP style radiance field in plain PyTorch: a multiresolution hash encoding (16 levels of
2^19 x 2 learnable features, trilinear interpolation of the 8 surrounding corners) feeding two tiny MLPs,
volume-rendered along 8192 rays x 128 stratified samples per step."""
import math
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.nn.functional as F

cfg = SimpleNamespace(
    n_levels=16,
    feats_per_level=2,
    log2_hashmap_size=19,
    base_res=16,
    finest_res=2048,
    hidden=64,
    geo_feat_dim=15,
    rays_per_batch=8192,
    samples_per_ray=128,
    near=2.0,
    far=6.0,
    iters=12,
    lr=1e-2,
)
PRIMES = (1, 2654435761, 805459861)


class HashEncoding(nn.Module):
    def __init__(self, n_levels, f, log2_T, base_res, finest_res):
        super().__init__()
        self.n_levels, self.f, self.T = n_levels, f, 2 ** log2_T
        growth = math.exp((math.log(finest_res) - math.log(base_res)) / (n_levels - 1))
        self.register_buffer("res", torch.tensor([math.floor(base_res * growth ** l) for l in range(n_levels)]),
                             persistent=False)
        self.embeddings = nn.Parameter(torch.empty(n_levels, self.T, f).uniform_(-1e-4, 1e-4))
        corners = torch.tensor([[(c >> 2) & 1, (c >> 1) & 1, c & 1] for c in range(8)])
        self.register_buffer("corners", corners, persistent=False)           # (8, 3)
        self.register_buffer("primes", torch.tensor(PRIMES), persistent=False)

    def forward(self, x):                                     # x in [0, 1]^3, (N, 3)
        N = x.size(0)
        scaled = x[:, None, :] * self.res[None, :, None]      # (N, L, 3)
        base = scaled.floor().long()
        frac = scaled - base                                  # (N, L, 3)
        idx = base[:, :, None, :] + self.corners[None, None]  # (N, L, 8, 3)
        h = (idx * self.primes).unbind(-1)
        h = (h[0] ^ h[1] ^ h[2]) % self.T                     # (N, L, 8)
        level = torch.arange(self.n_levels, device=x.device)[None, :, None]
        feats = self.embeddings[level, h]                     # (N, L, 8, f)
        c = self.corners[None, None].float()                  # (1, 1, 8, 3)
        w = (c * frac[:, :, None, :] + (1 - c) * (1 - frac[:, :, None, :])).prod(-1)   # (N, L, 8)
        return (w.unsqueeze(-1) * feats).sum(2).reshape(N, -1)  # (N, L*f)


class NGPField(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.encoding = HashEncoding(c.n_levels, c.feats_per_level, c.log2_hashmap_size, c.base_res, c.finest_res)
        enc_dim = c.n_levels * c.feats_per_level
        self.sigma_net = nn.Sequential(nn.Linear(enc_dim, c.hidden), nn.ReLU(), nn.Linear(c.hidden, 1 + c.geo_feat_dim))
        self.color_net = nn.Sequential(nn.Linear(c.geo_feat_dim + 16, c.hidden), nn.ReLU(),
                                       nn.Linear(c.hidden, c.hidden), nn.ReLU(), nn.Linear(c.hidden, 3))

    @staticmethod
    def sh_encode(d):
        # degree-4 spherical-harmonics-like basis (16 terms) of the view direction
        x, y, z = d.unbind(-1)
        return torch.stack([torch.ones_like(x), y, z, x, x * y, y * z, 3 * z * z - 1, x * z, x * x - y * y,
                            y * (3 * x * x - y * y), x * y * z, y * (5 * z * z - 1), z * (5 * z * z - 3),
                            x * (5 * z * z - 1), z * (x * x - y * y), x * (x * x - 3 * y * y)], -1)

    def forward(self, pts, dirs):
        h = self.sigma_net(self.encoding(pts))
        sigma = F.softplus(h[:, 0] - 1.0)
        rgb = torch.sigmoid(self.color_net(torch.cat([h[:, 1:], self.sh_encode(dirs)], -1)))
        return sigma, rgb


def render_rays(field, origins, dirs, c):
    R, S = origins.size(0), c.samples_per_ray
    t = torch.linspace(c.near, c.far, S, device=origins.device).expand(R, S)
    t = t + torch.rand_like(t) * (c.far - c.near) / S                       # stratified jitter
    pts = origins[:, None] + dirs[:, None] * t[..., None]                   # (R, S, 3)
    pts01 = ((pts + 4.0) / 8.0).clamp(0, 1)
    sigma, rgb = field(pts01.reshape(-1, 3), dirs[:, None].expand(R, S, 3).reshape(-1, 3))
    sigma, rgb = sigma.view(R, S), rgb.view(R, S, 3)
    delta = torch.cat([t[:, 1:] - t[:, :-1], torch.full_like(t[:, :1], 1e10)], -1)
    alpha = 1 - torch.exp(-sigma * delta)
    trans = torch.cumprod(torch.cat([torch.ones_like(alpha[:, :1]), 1 - alpha + 1e-10], -1), -1)[:, :-1]
    weights = alpha * trans
    return (weights[..., None] * rgb).sum(1)


def sample_rays(n, device):
    theta = torch.rand(n, device=device) * 2 * math.pi
    origins = torch.stack([4 * torch.cos(theta), 4 * torch.sin(theta), torch.full_like(theta, 0.5)], -1)
    target = torch.randn(n, 3, device=device) * 0.3
    dirs = F.normalize(target - origins, dim=-1)
    colors = torch.rand(n, 3, device=device)
    return origins, dirs, colors


def main():
    device = "cuda"
    field = NGPField(cfg).to(device)
    opt = torch.optim.Adam([
        {"params": field.encoding.parameters(), "weight_decay": 0.0},
        {"params": list(field.sigma_net.parameters()) + list(field.color_net.parameters()), "weight_decay": 1e-6},
    ], lr=cfg.lr, betas=(0.9, 0.99), eps=1e-15)
    for it in range(cfg.iters):
        origins, dirs, target = sample_rays(cfg.rays_per_batch, device)
        pred = render_rays(field, origins, dirs, cfg)
        loss = F.mse_loss(pred, target)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        psnr = -10 * math.log10(max(loss.item(), 1e-10))
        print(f"iter {it} loss {loss.item():.5f} psnr {psnr:.2f}")
    print("peak GiB", torch.cuda.max_memory_allocated() / 2**30)


if __name__ == "__main__":
    main()
