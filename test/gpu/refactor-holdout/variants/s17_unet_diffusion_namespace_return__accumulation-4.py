"""DDPM-style noise-prediction U-Net configured with types.SimpleNamespace; `while True` + `return`.

train(cfg) pulls batches with next() from a DataLoader iterator (re-created on StopIteration,
drop_last=True) inside `while True:` and returns from inside the loop when step reaches
cfg.max_steps. Skip connections kept in a list consumed in forward(), GroupNorm, AdamW,
CosineAnnealingLR per step, clipping, logging every cfg.log_every steps.
"""
import json
import math
import os
import time
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.optimizer import register_optimizer_step_post_hook
from torch.utils.data import DataLoader, TensorDataset

# ---------------------------------------------------------------------------
# Measurement for the held-out harness (not part of the training recipe):
# counts real optimizer updates and prints one RESULT line at the end.
# ---------------------------------------------------------------------------
_T0 = time.time()
_N_UPDATES = 0


def _count_update(optimizer, args, kwargs):
    global _N_UPDATES
    _N_UPDATES += 1


register_optimizer_step_post_hook(_count_update)


def _snapshot(model):
    return [p.detach().to("cpu", copy=True) for p in model.parameters()]


def _emit_result(model, optimizer, loss, init_params, eval_fn, log_at, scheduler=None, counter=None):
    peak = torch.cuda.max_memory_allocated()
    eval_loss = float(eval_fn())
    checksum, delta_sq = 0.0, 0.0
    with torch.no_grad():
        for p, p0 in zip(model.parameters(), init_params):
            pd = p.detach().double()
            checksum += pd.sum().item()
            delta_sq += (pd - p0.to(device=p.device, dtype=torch.float64)).pow(2).sum().item()
    loss_val = float(loss.detach().float().item()) if torch.is_tensor(loss) else float(loss)
    print("RESULT " + json.dumps({
        "script": os.path.basename(__file__),
        "loss": loss_val,
        "eval_loss": eval_loss,
        "opt_steps": _N_UPDATES,
        "counter": counter,
        "sched_steps": getattr(scheduler, "last_epoch", None),
        "lr": float(optimizer.param_groups[0]["lr"]),
        "param_checksum": checksum,
        "param_delta": math.sqrt(delta_sq),
        "log_at": list(log_at),
        "max_memory_allocated": int(peak),
        "param_dtype": str(next(model.parameters()).dtype).replace("torch.", ""),
        "finite": bool(math.isfinite(loss_val) and math.isfinite(eval_loss)),
        "elapsed_s": round(time.time() - _T0, 2),
    }), flush=True)


# ---------------------------------------------------------------------------
# Training recipe
# ---------------------------------------------------------------------------
torch.backends.cudnn.benchmark = False
torch.backends.cudnn.deterministic = True

cfg = SimpleNamespace(
    batch_size=64,
    image_size=64,
    base_channels=96,
    channel_mults=(1, 2, 4),
    time_dim=256,
    lr=2e-4,
    max_steps=20,
    log_every=5,
    num_timesteps=1000,
    n_images=512,
)


def timestep_embedding(t, dim):
    half = dim // 2
    freqs = torch.exp(-math.log(10000.0) * torch.arange(half, device=t.device, dtype=torch.float32) / half)
    args = t.float()[:, None] * freqs[None]
    return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)


class ResBlock(nn.Module):
    def __init__(self, c_in, c_out, t_dim):
        super().__init__()
        self.norm1 = nn.GroupNorm(32, c_in)
        self.conv1 = nn.Conv2d(c_in, c_out, 3, padding=1)
        self.t_proj = nn.Linear(t_dim, c_out)
        self.norm2 = nn.GroupNorm(32, c_out)
        self.conv2 = nn.Conv2d(c_out, c_out, 3, padding=1)
        self.skip = nn.Conv2d(c_in, c_out, 1) if c_in != c_out else nn.Identity()

    def forward(self, x, t_emb):
        h = self.conv1(F.silu(self.norm1(x)))
        h = h + self.t_proj(t_emb)[:, :, None, None]
        h = self.conv2(F.silu(self.norm2(h)))
        return h + self.skip(x)


class UNet(nn.Module):
    def __init__(self, base=96, mults=(1, 2, 4), t_dim=256):
        super().__init__()
        self.t_dim = t_dim
        self.time_mlp = nn.Sequential(nn.Linear(t_dim, t_dim), nn.SiLU(), nn.Linear(t_dim, t_dim))
        self.stem = nn.Conv2d(3, base, 3, padding=1)
        chans = [base * m for m in mults]
        self.down_blocks = nn.ModuleList()
        self.downsamples = nn.ModuleList()
        c = base
        for i, ch in enumerate(chans):
            self.down_blocks.append(ResBlock(c, ch, t_dim))
            c = ch
            self.downsamples.append(nn.Conv2d(c, c, 3, stride=2, padding=1) if i < len(chans) - 1 else nn.Identity())
        self.mid = ResBlock(c, c, t_dim)
        self.up_blocks = nn.ModuleList()
        self.upsamples = nn.ModuleList()
        for i, ch in reversed(list(enumerate(chans))):
            self.up_blocks.append(ResBlock(c + ch, ch, t_dim))
            c = ch
            self.upsamples.append(nn.Upsample(scale_factor=2, mode="nearest") if i > 0 else nn.Identity())
        self.out = nn.Sequential(nn.GroupNorm(32, c), nn.SiLU(), nn.Conv2d(c, 3, 3, padding=1))

    def forward(self, x, t):
        t_emb = self.time_mlp(timestep_embedding(t, self.t_dim))
        h = self.stem(x)
        skips = []
        for block, down in zip(self.down_blocks, self.downsamples):
            h = block(h, t_emb)
            skips.append(h)
            h = down(h)
        h = self.mid(h, t_emb)
        for block, up in zip(self.up_blocks, self.upsamples):
            h = block(torch.cat([h, skips.pop()], dim=1), t_emb)
            h = up(h)
        return self.out(h)


def make_data(n, seed):
    g = torch.Generator().manual_seed(seed)
    x0 = torch.rand(n, 3, cfg.image_size, cfg.image_size, generator=g) * 2 - 1
    noise = torch.randn(n, 3, cfg.image_size, cfg.image_size, generator=g)
    t = torch.randint(0, cfg.num_timesteps, (n,), generator=g)
    return x0, noise, t


def train(cfg):
    torch.manual_seed(0)
    device = torch.device("cuda")
    betas = torch.linspace(1e-4, 0.02, cfg.num_timesteps, device=device)
    alphas_cumprod = torch.cumprod(1.0 - betas, dim=0)

    x0, noise, t = make_data(cfg.n_images, seed=41)
    val = [v.to(device) for v in make_data(16, seed=42)]
    loader = DataLoader(TensorDataset(x0, noise, t), batch_size=cfg.batch_size // 4, shuffle=False, drop_last=True)

    model = UNet(cfg.base_channels, cfg.channel_mults, cfg.time_dim).to(device)
    init_params = _snapshot(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.0)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=cfg.max_steps, eta_min=cfg.lr / 20)

    def q_sample(x_start, eps, tt):
        a = alphas_cumprod[tt].view(-1, 1, 1, 1)
        return a.sqrt() * x_start + (1.0 - a).sqrt() * eps

    @torch.no_grad()
    def evaluate():
        model.eval()
        vx0, vnoise, vt = val
        loss = F.mse_loss(model(q_sample(vx0, vnoise, vt), vt), vnoise).item()
        model.train()
        return loss

    log_at = []
    step = 0
    data_iter = iter(loader)
    model.train()
    accumulation_steps = 4  # effective batch size: 16 x 4 = 64 samples per optimizer step
    micro_step = 0
    while True:
        try:
            x_start, eps, tt = next(data_iter)
        except StopIteration:
            data_iter = iter(loader)
            x_start, eps, tt = next(data_iter)
        x_start, eps, tt = x_start.to(device), eps.to(device), tt.to(device)
        pred = model(q_sample(x_start, eps, tt), tt)
        loss = F.mse_loss(pred, eps)
        if micro_step % accumulation_steps == 0:
            optimizer.zero_grad(set_to_none=True)
        (loss / accumulation_steps).backward()
        micro_step += 1
        if micro_step % accumulation_steps == 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            step += 1
            if step % cfg.log_every == 0:
                print(f"step {step} loss {loss.item():.4f}")
                log_at.append(_N_UPDATES)
            if step >= cfg.max_steps:
                return model, optimizer, scheduler, loss, init_params, evaluate, log_at, step
    if micro_step % accumulation_steps != 0:
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.grad.mul_(accumulation_steps / (micro_step % accumulation_steps))
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        step += 1
        if step % cfg.log_every == 0:
            print(f"step {step} loss {loss.item():.4f}")
            log_at.append(_N_UPDATES)
        if step >= cfg.max_steps:
            return model, optimizer, scheduler, loss, init_params, evaluate, log_at, step


if __name__ == "__main__":
    model, optimizer, scheduler, loss, init_params, evaluate, log_at, step = train(cfg)
    _emit_result(model, optimizer, loss, init_params, evaluate, log_at, scheduler=scheduler, counter=step)
