"""A small Mamba language model in plain PyTorch (no CUDA kernels): the selective scan is a Python loop
over time steps, as in the "mamba-minimal" reference implementation.

Config is a dataclass that inherits the shared training fields; derived sizes are properties.
"""
import math
import time
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class BaseConfig:
    vocab_size: int = 32000
    seq_len: int = 512
    batch_size: int = 8
    lr: float = 6e-4
    weight_decay: float = 0.1
    max_steps: int = 6


@dataclass
class MambaConfig(BaseConfig):
    d_model: int = 512
    n_layer: int = 8
    d_state: int = 16
    expand: int = 2
    d_conv: int = 4

    @property
    def d_inner(self) -> int:
        return self.expand * self.d_model

    @property
    def dt_rank(self) -> int:
        return math.ceil(self.d_model / 16)


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def selective_scan(u, delta, A, B, C, D):
    """u, delta: (b, l, d_in); A: (d_in, n); B, C: (b, l, n); D: (d_in,)"""
    b, l, d_in = u.shape
    deltaA = torch.exp(delta.unsqueeze(-1) * A)                        # (b, l, d_in, n)
    deltaB_u = (delta * u).unsqueeze(-1) * B.unsqueeze(2)              # (b, l, d_in, n)
    x = torch.zeros(b, d_in, A.shape[1], device=u.device, dtype=u.dtype)
    ys = []
    for i in range(l):
        x = deltaA[:, i] * x + deltaB_u[:, i]
        ys.append(torch.einsum("bdn,bn->bd", x, C[:, i]))
    y = torch.stack(ys, dim=1)
    return y + u * D


class MambaBlock(nn.Module):
    def __init__(self, cfg: MambaConfig):
        super().__init__()
        self.cfg = cfg
        self.in_proj = nn.Linear(cfg.d_model, 2 * cfg.d_inner, bias=False)
        self.conv1d = nn.Conv1d(cfg.d_inner, cfg.d_inner, kernel_size=cfg.d_conv, groups=cfg.d_inner,
                                padding=cfg.d_conv - 1)
        self.x_proj = nn.Linear(cfg.d_inner, cfg.dt_rank + 2 * cfg.d_state, bias=False)
        self.dt_proj = nn.Linear(cfg.dt_rank, cfg.d_inner)
        A = torch.arange(1, cfg.d_state + 1, dtype=torch.float32).repeat(cfg.d_inner, 1)
        self.A_log = nn.Parameter(torch.log(A))
        self.D = nn.Parameter(torch.ones(cfg.d_inner))
        self.out_proj = nn.Linear(cfg.d_inner, cfg.d_model, bias=False)

    def forward(self, x):
        b, l, _ = x.shape
        x, res = self.in_proj(x).split([self.cfg.d_inner, self.cfg.d_inner], dim=-1)
        x = self.conv1d(x.transpose(1, 2))[..., :l].transpose(1, 2)
        x = F.silu(x)
        A = -torch.exp(self.A_log)
        delta, B, C = self.x_proj(x).split([self.cfg.dt_rank, self.cfg.d_state, self.cfg.d_state], dim=-1)
        delta = F.softplus(self.dt_proj(delta))
        y = selective_scan(x, delta, A, B, C, self.D)
        return self.out_proj(y * F.silu(res))


class ResidualBlock(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.norm = RMSNorm(cfg.d_model)
        self.mixer = MambaBlock(cfg)

    def forward(self, x):
        return x + self.mixer(self.norm(x))


class MambaLM(nn.Module):
    def __init__(self, cfg: MambaConfig):
        super().__init__()
        self.embedding = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.layers = nn.ModuleList([ResidualBlock(cfg) for _ in range(cfg.n_layer)])
        self.norm_f = RMSNorm(cfg.d_model)
        self.lm_head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        self.lm_head.weight = self.embedding.weight  # tied
        nn.init.normal_(self.embedding.weight, std=0.02)

    def forward(self, ids):
        x = self.embedding(ids)
        for layer in self.layers:
            x = layer(x)
        return self.lm_head(self.norm_f(x))


def main():
    cfg = MambaConfig()
    device = "cuda"
    torch.manual_seed(0)
    model = MambaLM(cfg).to(device)
    print(f"d_inner={cfg.d_inner} dt_rank={cfg.dt_rank} params={sum(p.numel() for p in model.parameters()) / 1e6:.1f}M")
    decay = [p for n, p in model.named_parameters() if p.ndim >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.ndim < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": cfg.weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}], lr=cfg.lr, betas=(0.9, 0.95))

    data = torch.randint(0, cfg.vocab_size, (cfg.batch_size * cfg.max_steps, cfg.seq_len + 1))
    t0 = time.time()
    model.train()
    for step in range(cfg.max_steps):
        batch = data[step * cfg.batch_size:(step + 1) * cfg.batch_size].to(device)
        inputs, targets = batch[:, :-1], batch[:, 1:]
        logits = model(inputs)
        loss = F.cross_entropy(logits.reshape(-1, cfg.vocab_size), targets.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        print(f"step {step} loss {loss.item():.3f} ({time.time() - t0:.1f}s)")
    print(f"peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
