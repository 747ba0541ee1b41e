"""A small Mamba-style language model with the selective scan written as a Python loop over time.

No custom kernels: the recurrence h_t = exp(dt*A) * h_{t-1} + dt*B_t*x_t, y_t = C_t . h_t is unrolled step
by step (fine for a research prototype, memory grows with the sequence length).
"""
import math
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.nn.functional as F

cfg = SimpleNamespace(
    vocab_size=32000,
    d_model=768,
    n_layers=6,
    d_state=16,
    expand=2,
    d_conv=4,
    seq_len=512,
    batch_size=8,
    steps=4,
    lr=6e-4,
)
cfg.d_inner = cfg.expand * cfg.d_model
cfg.dt_rank = math.ceil(cfg.d_model / 16)


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class MambaBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.in_proj = nn.Linear(c.d_model, 2 * c.d_inner, bias=False)
        self.conv1d = nn.Conv1d(c.d_inner, c.d_inner, c.d_conv, groups=c.d_inner, padding=c.d_conv - 1)
        self.x_proj = nn.Linear(c.d_inner, c.dt_rank + 2 * c.d_state, bias=False)
        self.dt_proj = nn.Linear(c.dt_rank, c.d_inner, bias=True)
        A = torch.arange(1, c.d_state + 1, dtype=torch.float32).repeat(c.d_inner, 1)
        self.A_log = nn.Parameter(torch.log(A))
        self.D = nn.Parameter(torch.ones(c.d_inner))
        self.out_proj = nn.Linear(c.d_inner, c.d_model, bias=False)

    def selective_scan(self, u, delta, A, B, C, D):
        # u, delta: (b, l, d_in); A: (d_in, n); B, C: (b, l, n)
        b, l, d_in = u.shape
        deltaA = torch.exp(delta.unsqueeze(-1) * A)                          # (b, l, d_in, n)
        deltaB_u = delta.unsqueeze(-1) * B.unsqueeze(2) * u.unsqueeze(-1)   # (b, l, d_in, n)
        h = u.new_zeros(b, d_in, A.shape[1])
        ys = []
        for t in range(l):
            h = deltaA[:, t] * h + deltaB_u[:, t]
            ys.append(torch.einsum("bdn,bn->bd", h, C[:, t]))
        y = torch.stack(ys, dim=1)
        return y + u * D

    def forward(self, x):
        b, l, _ = x.shape
        xz = self.in_proj(x)
        x_in, z = xz.chunk(2, dim=-1)
        x_in = self.conv1d(x_in.transpose(1, 2))[..., :l].transpose(1, 2)
        x_in = F.silu(x_in)
        dbc = self.x_proj(x_in)
        dt, B, C = torch.split(dbc, [self.c.dt_rank, self.c.d_state, self.c.d_state], dim=-1)
        delta = F.softplus(self.dt_proj(dt))
        A = -torch.exp(self.A_log)
        y = self.selective_scan(x_in, delta, A, B, C, self.D)
        return self.out_proj(y * F.silu(z))


class ResidualBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.norm = RMSNorm(c.d_model)
        self.mixer = MambaBlock(c)

    def forward(self, x):
        return x + self.mixer(self.norm(x))


class MambaLM(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embedding = nn.Embedding(c.vocab_size, c.d_model)
        self.layers = nn.ModuleList([ResidualBlock(c) for _ in range(c.n_layers)])
        self.norm_f = RMSNorm(c.d_model)
        self.lm_head = nn.Linear(c.d_model, c.vocab_size, bias=False)
        self.lm_head.weight = self.embedding.weight

    def forward(self, idx):
        x = self.embedding(idx)
        for layer in self.layers:
            x = layer(x)
        return self.lm_head(self.norm_f(x))


def main():
    torch.manual_seed(0)
    model = MambaLM(cfg).cuda()
    print(f"params {sum(p.numel() for p in model.parameters()) / 1e6:.1f}M  d_inner={cfg.d_inner} dt_rank={cfg.dt_rank}")
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.1)
    for step in range(cfg.steps):
        tokens = torch.randint(0, cfg.vocab_size, (cfg.batch_size, cfg.seq_len + 1), device="cuda")
        x, y = tokens[:, :-1], tokens[:, 1:]
        logits = model(x)
        loss = F.cross_entropy(logits.reshape(-1, cfg.vocab_size), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        print(f"step {step} loss {loss.item():.3f}")
    print("peak GiB", torch.cuda.max_memory_allocated() / 2**30)


if __name__ == "__main__":
    main()
