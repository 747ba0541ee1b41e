"""Deep MLP classifier on synthetic features, trained at module level.

Plain script style: module constants (one of them computed), an nn.Sequential body
built in a loop, SGD with momentum, CosineAnnealingLR stepped once per batch with
T_max derived from len(loader), logging every few steps, and a final half-size batch.
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
torch.manual_seed(0)
device = torch.device("cuda")

BATCH_SIZE = 16384
IN_FEATURES = 1024
HIDDEN = 4 * IN_FEATURES
DEPTH = 6
NUM_CLASSES = 100
EPOCHS = 2
LR = 0.05
LOG_EVERY = 3
N_SAMPLES = 6 * BATCH_SIZE + BATCH_SIZE // 2  # 6 full batches + one half batch per epoch

gen = torch.Generator().manual_seed(1234)
X = torch.randn(N_SAMPLES, IN_FEATURES, generator=gen)
Y = torch.randint(0, NUM_CLASSES, (N_SAMPLES,), generator=gen)
X_val = torch.randn(2048, IN_FEATURES, generator=gen)
Y_val = torch.randint(0, NUM_CLASSES, (2048,), generator=gen)

train_loader = DataLoader(TensorDataset(X, Y), batch_size=BATCH_SIZE // 4, shuffle=False)

layers = []
d = IN_FEATURES
for _ in range(DEPTH):
    layers += [nn.Linear(d, HIDDEN), nn.ReLU()]
    d = HIDDEN
layers.append(nn.Linear(d, NUM_CLASSES))
model = nn.Sequential(*layers).to(device)
init_params = _snapshot(model)

optimizer = torch.optim.SGD(model.parameters(), lr=LR, momentum=0.9, weight_decay=1e-4)
accumulation_steps = 4  # effective batch size: 4096 x 4 = 16384 samples per optimizer step
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=EPOCHS * -(-len(train_loader) // accumulation_steps), eta_min=1e-3)
criterion = nn.CrossEntropyLoss()


@torch.no_grad()
def evaluate():
    model.eval()
    logits = model(X_val.to(device))
    model.train()
    return F.cross_entropy(logits, Y_val.to(device)).item()


global_step = 0
log_at = []
model.train()
for epoch in range(EPOCHS):
    micro_step = 0
    for xb, yb in train_loader:
        xb = xb.to(device, non_blocking=True)
        yb = yb.to(device, non_blocking=True)
        if micro_step % accumulation_steps == 0:
            optimizer.zero_grad()
        out = model(xb)
        loss = criterion(out, yb)
        (loss / accumulation_steps).backward()
        micro_step += 1
        if micro_step % accumulation_steps == 0:
            optimizer.step()
            scheduler.step()
            global_step += 1
            if global_step % LOG_EVERY == 0:
                print(f"epoch {epoch} step {global_step} loss {loss.item():.4f} lr {scheduler.get_last_lr()[0]:.5f}")
                log_at.append(_N_UPDATES)
    if micro_step % accumulation_steps != 0:
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.grad.mul_(accumulation_steps / (micro_step % accumulation_steps))
        optimizer.step()
        scheduler.step()
        global_step += 1
        if global_step % LOG_EVERY == 0:
            print(f"epoch {epoch} step {global_step} loss {loss.item():.4f} lr {scheduler.get_last_lr()[0]:.5f}")
            log_at.append(_N_UPDATES)

_emit_result(model, optimizer, loss, init_params, evaluate, log_at, scheduler=scheduler, counter=global_step)
