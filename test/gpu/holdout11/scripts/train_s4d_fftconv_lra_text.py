"""S4D (diagonal state space) classifier on byte-level text, LRA "text" task style, length 4096.

The SSM convolution kernel is materialised for the whole sequence and applied with an FFT convolution.
Each residual block runs under torch.utils.checkpoint to fit longer sequences.
"""
import math
from typing import NamedTuple

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint
from torch.utils.data import DataLoader, TensorDataset


class HParams(NamedTuple):
    vocab_size: int = 256
    seq_len: int = 4096
    d_model: int = 256
    d_state: int = 64
    n_layers: int = 6
    n_classes: int = 2
    dropout: float = 0.1
    batch_size: int = 64
    lr: float = 4e-3
    ssm_lr: float = 1e-3
    weight_decay: float = 0.05
    steps: int = 4
    grad_ckpt: bool = True


class S4DKernel(nn.Module):
    def __init__(self, d_model, N=64, dt_min=0.001, dt_max=0.1):
        super().__init__()
        H = d_model
        log_dt = torch.rand(H) * (math.log(dt_max) - math.log(dt_min)) + math.log(dt_min)
        C = torch.randn(H, N // 2, dtype=torch.cfloat)
        self.C = nn.Parameter(torch.view_as_real(C))
        self.log_dt = nn.Parameter(log_dt)
        self.log_A_real = nn.Parameter(torch.log(0.5 * torch.ones(H, N // 2)))
        self.A_imag = nn.Parameter(math.pi * torch.arange(N // 2).float().repeat(H, 1))

    def forward(self, L):
        dt = torch.exp(self.log_dt)                                   # (H)
        C = torch.view_as_complex(self.C)                              # (H, N/2)
        A = -torch.exp(self.log_A_real) + 1j * self.A_imag             # (H, N/2)
        dtA = A * dt.unsqueeze(-1)
        K = dtA.unsqueeze(-1) * torch.arange(L, device=A.device)       # (H, N/2, L)
        C = C * (torch.exp(dtA) - 1.0) / A
        return 2 * torch.einsum("hn,hnl->hl", C, torch.exp(K)).real   # (H, L)


class S4D(nn.Module):
    def __init__(self, d_model, d_state, dropout):
        super().__init__()
        self.kernel = S4DKernel(d_model, N=d_state)
        self.D = nn.Parameter(torch.randn(d_model))
        self.activation = nn.GELU()
        self.dropout = nn.Dropout(dropout)
        self.output_linear = nn.Sequential(nn.Conv1d(d_model, 2 * d_model, kernel_size=1), nn.GLU(dim=-2))

    def forward(self, u):  # (B, H, L)
        L = u.size(-1)
        k = self.kernel(L)
        k_f = torch.fft.rfft(k, n=2 * L)
        u_f = torch.fft.rfft(u, n=2 * L)
        y = torch.fft.irfft(u_f * k_f, n=2 * L)[..., :L]
        y = y + u * self.D.unsqueeze(-1)
        y = self.dropout(self.activation(y))
        return self.output_linear(y)


class Block(nn.Module):
    def __init__(self, hp: HParams):
        super().__init__()
        self.norm = nn.LayerNorm(hp.d_model)
        self.ssm = S4D(hp.d_model, hp.d_state, hp.dropout)
        self.drop = nn.Dropout(hp.dropout)

    def forward(self, x):  # (B, L, H)
        z = self.norm(x).transpose(-1, -2)
        z = self.ssm(z).transpose(-1, -2)
        return x + self.drop(z)


class S4Classifier(nn.Module):
    def __init__(self, hp: HParams):
        super().__init__()
        self.hp = hp
        self.embed = nn.Embedding(hp.vocab_size, hp.d_model)
        self.blocks = nn.ModuleList([Block(hp) for _ in range(hp.n_layers)])
        self.norm = nn.LayerNorm(hp.d_model)
        self.head = nn.Linear(hp.d_model, hp.n_classes)

    def forward(self, tokens):
        x = self.embed(tokens)
        for blk in self.blocks:
            if self.hp.grad_ckpt and self.training:
                x = checkpoint(blk, x, use_reentrant=False)
            else:
                x = blk(x)
        return self.head(self.norm(x).mean(dim=1))


def make_optimizer(model, hp):
    ssm_params, decay, no_decay = [], [], []
    for name, p in model.named_parameters():
        if ".kernel." in name:
            ssm_params.append(p)
        elif p.ndim < 2:
            no_decay.append(p)
        else:
            decay.append(p)
    groups = [
        {"params": decay, "weight_decay": hp.weight_decay},
        {"params": no_decay, "weight_decay": 0.0},
        {"params": ssm_params, "weight_decay": 0.0, "lr": hp.ssm_lr},
    ]
    return torch.optim.AdamW(groups, lr=hp.lr, foreach=False)


def main(hp=HParams()):
    device = "cuda"
    n = hp.batch_size * hp.steps
    ds = TensorDataset(torch.randint(0, hp.vocab_size, (n, hp.seq_len)), torch.randint(0, hp.n_classes, (n,)))
    loader = DataLoader(ds, batch_size=hp.batch_size, shuffle=True, drop_last=True)

    model = S4Classifier(hp).to(device)
    print(f"params: {sum(p.numel() for p in model.parameters()) / 1e6:.2f}M")
    opt = make_optimizer(model, hp)

    model.train()
    for step, (x, y) in enumerate(loader):
        x, y = x.to(device), y.to(device)
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"step {step} loss {loss.item():.4f}")

    model.eval()
    with torch.no_grad():
        acc = (model(x).argmax(-1) == y).float().mean().item()
    print("train-batch acc", acc)


if __name__ == "__main__":
    main(HParams(batch_size=64, seq_len=4096))
