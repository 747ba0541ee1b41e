"""Convolutional autoencoder (GroupNorm) at module level with `for step, (images,) in enumerate(loader)`.

The enumerate index IS the optimizer-step counter: logging uses `step % LOG_EVERY` and the run
stops with `if step >= MAX_STEPS: break` at the top of the body, long before the loader ends.
ExponentialLR stepped per batch, MSE reconstruction loss, helper functions returning layers.
cuDNN keeps its default TF32 setting (as most scripts do).
"""
import json
import math
import os
import time

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
torch.manual_seed(0)
device = torch.device("cuda")

BATCH_SIZE = 64
IMAGE_SIZE = 128
MAX_STEPS = 16
LOG_EVERY = 5
LR = 1e-3


def down(c_in, c_out):
    return nn.Sequential(nn.Conv2d(c_in, c_out, 4, stride=2, padding=1), nn.GroupNorm(16, c_out), nn.SiLU())


def up(c_in, c_out):
    return nn.Sequential(nn.ConvTranspose2d(c_in, c_out, 4, stride=2, padding=1), nn.GroupNorm(16, c_out), nn.SiLU())


class AutoEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.SiLU(), down(64, 128), down(128, 256), down(256, 256))
        self.decoder = nn.Sequential(up(256, 256), up(256, 128), up(128, 64), nn.Conv2d(64, 3, 3, padding=1))

    def forward(self, x):
        return self.decoder(self.encoder(x))


gen = torch.Generator().manual_seed(123)
images = torch.rand(18 * BATCH_SIZE, 3, IMAGE_SIZE, IMAGE_SIZE, generator=gen)
val_images = torch.rand(32, 3, IMAGE_SIZE, IMAGE_SIZE, generator=gen)
loader = DataLoader(TensorDataset(images), batch_size=BATCH_SIZE // 4, shuffle=False)

model = AutoEncoder().to(device)
init_params = _snapshot(model)
optimizer = torch.optim.Adam(model.parameters(), lr=LR)
scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.97)


@torch.no_grad()
def evaluate():
    model.eval()
    x = val_images.to(device)
    loss = F.mse_loss(model(x), x).item()
    model.train()
    return loss


log_at = []
model.train()
accumulation_steps = 4  # effective batch size: 16 x 4 = 64 samples per optimizer step
micro_step = 0
for micro_index, (images_b,) in enumerate(loader):
    step = micro_index // accumulation_steps  # the optimizer step this micro-batch belongs to
    if step >= MAX_STEPS:
        break
    images_b = images_b.to(device)
    recon = model(images_b)
    loss = F.mse_loss(recon, images_b)
    if micro_step % accumulation_steps == 0:
        optimizer.zero_grad()
    (loss / accumulation_steps).backward()
    micro_step += 1
    if micro_step % accumulation_steps == 0:
        optimizer.step()
        scheduler.step()
        if step % LOG_EVERY == 0:
            print(f"step {step} loss {loss.item():.5f} lr {scheduler.get_last_lr()[0]:.2e}")
            log_at.append(_N_UPDATES)
if micro_step % accumulation_steps != 0:
    for group in optimizer.param_groups:
        for p in group["params"]:
            if p.grad is not None:
                p.grad.mul_(accumulation_steps / (micro_step % accumulation_steps))
    optimizer.step()
    scheduler.step()
    if step % LOG_EVERY == 0:
        print(f"step {step} loss {loss.item():.5f} lr {scheduler.get_last_lr()[0]:.2e}")
        log_at.append(_N_UPDATES)

_emit_result(model, optimizer, loss, init_params, evaluate, log_at, scheduler=scheduler, counter=step)
