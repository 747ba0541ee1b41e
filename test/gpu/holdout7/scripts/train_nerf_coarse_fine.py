"""Vanilla NeRF (coarse + fine MLPs, hierarchical sampling) on random rays.

4096 rays per step, 64 stratified coarse samples + 128 importance samples (fine network sees 192 per ray),
positional encoding with 10 / 4 frequencies, 8 x 256 MLP with a skip at layer 4. fp32, Adam.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

N_RAYS = 4096
N_COARSE = 64
N_FINE = 128
NEAR, FAR = 2.0, 6.0
L_XYZ, L_DIR = 10, 4
STEPS = 5


def posenc(x, n_freqs):
    out = [x]
    for i in range(n_freqs):
        out += [torch.sin((2.0 ** i) * x), torch.cos((2.0 ** i) * x)]
    return torch.cat(out, dim=-1)


class NeRF(nn.Module):
    def __init__(self, depth=8, width=256, skips=(4,)):
        super().__init__()
        in_xyz = 3 + 3 * 2 * L_XYZ
        in_dir = 3 + 3 * 2 * L_DIR
        self.skips = skips
        self.pts_linears = nn.ModuleList()
        d = in_xyz
        for i in range(depth):
            self.pts_linears.append(nn.Linear(d, width))
            d = width + in_xyz if i in skips else width
        self.sigma = nn.Linear(width, 1)
        self.feature = nn.Linear(width, width)
        self.views = nn.Linear(width + in_dir, width // 2)
        self.rgb = nn.Linear(width // 2, 3)

    def forward(self, xyz, dirs):
        x_in = posenc(xyz, L_XYZ)
        d_in = posenc(dirs, L_DIR)
        h = x_in
        for i, layer in enumerate(self.pts_linears):
            h = F.relu(layer(h))
            if i in self.skips:
                h = torch.cat([x_in, h], dim=-1)
        sigma = self.sigma(h)
        h = F.relu(self.views(torch.cat([self.feature(h), d_in], dim=-1)))
        return torch.sigmoid(self.rgb(h)), sigma


def render(model, rays_o, rays_d, z):
    pts = rays_o[:, None] + rays_d[:, None] * z[..., None]                   # (R, S, 3)
    dirs = F.normalize(rays_d, dim=-1)[:, None].expand_as(pts)
    rgb, sigma = model(pts.reshape(-1, 3), dirs.reshape(-1, 3))
    rgb, sigma = rgb.view(*pts.shape[:2], 3), sigma.view(*pts.shape[:2])
    delta = torch.cat([z[:, 1:] - z[:, :-1], torch.full_like(z[:, :1], 1e10)], dim=-1)
    alpha = 1 - torch.exp(-F.relu(sigma) * delta)
    trans = torch.cumprod(torch.cat([torch.ones_like(alpha[:, :1]), 1 - alpha + 1e-10], dim=-1), dim=-1)[:, :-1]
    w = alpha * trans
    return (w[..., None] * rgb).sum(1), w


def sample_pdf(bins, weights, n):
    pdf = (weights + 1e-5) / (weights + 1e-5).sum(-1, keepdim=True)
    cdf = torch.cat([torch.zeros_like(pdf[:, :1]), torch.cumsum(pdf, -1)], -1)
    u = torch.rand(cdf.shape[0], n, device=cdf.device)
    idx = torch.searchsorted(cdf, u, right=True).clamp(1, cdf.shape[-1] - 1)
    lo, hi = torch.gather(cdf, 1, idx - 1), torch.gather(cdf, 1, idx)
    b_lo, b_hi = torch.gather(bins, 1, idx - 1), torch.gather(bins, 1, idx)
    t = (u - lo) / (hi - lo).clamp(min=1e-5)
    return b_lo + t * (b_hi - b_lo)


coarse, fine = NeRF().cuda(), NeRF().cuda()
optimizer = torch.optim.Adam(list(coarse.parameters()) + list(fine.parameters()), lr=5e-4)
scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.1 ** (1 / 250000))

for step in range(STEPS):
    rays_o = torch.randn(N_RAYS, 3, device="cuda") * 0.1 + torch.tensor([0.0, 0.0, 4.0], device="cuda")
    rays_d = F.normalize(torch.randn(N_RAYS, 3, device="cuda"), dim=-1)
    target = torch.rand(N_RAYS, 3, device="cuda")

    t = torch.linspace(0, 1, N_COARSE, device="cuda")
    z = NEAR * (1 - t) + FAR * t
    z = z.expand(N_RAYS, N_COARSE).clone()
    mids = 0.5 * (z[:, 1:] + z[:, :-1])
    upper = torch.cat([mids, z[:, -1:]], -1)
    lower = torch.cat([z[:, :1], mids], -1)
    z = lower + (upper - lower) * torch.rand_like(z)       # stratified

    rgb_c, w = render(coarse, rays_o, rays_d, z)
    z_mid = 0.5 * (z[:, 1:] + z[:, :-1])
    z_imp = sample_pdf(z_mid, w[:, 1:-1].detach(), N_FINE)
    z_all, _ = torch.sort(torch.cat([z, z_imp.detach()], -1), -1)
    rgb_f, _ = render(fine, rays_o, rays_d, z_all)

    loss = F.mse_loss(rgb_c, target) + F.mse_loss(rgb_f, target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    scheduler.step()
    psnr = -10 * torch.log10(F.mse_loss(rgb_f, target))
    print(f"step {step} loss {loss.item():.4f} psnr {psnr.item():.2f}")
