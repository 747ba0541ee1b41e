"""Very wide MLP regressor on tiny batches: memory is weights + grads + Adam states, not activations.

Six 8192x8192 layers (about 400M fp32 parameters, ~6.5 GB with Adam) on batches of 4 vectors:
activations are a few hundred KB. Module-level `for epoch` / `for xb, yb in loader`,
ExponentialLR stepped per batch, logging every LOG_EVERY steps.
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

WIDTH = 8192
N_LAYERS = 6
BATCH_SIZE = 4
EPOCHS = 2
LOG_EVERY = 5


class WideMLP(nn.Module):
    def __init__(self, width, n_layers):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(width, width) for _ in range(n_layers)])
        self.out = nn.Linear(width, 1)

    def forward(self, x):
        for layer in self.layers:
            x = F.silu(layer(x))
        return self.out(x).squeeze(-1)


g = torch.Generator().manual_seed(13)
X = torch.randn(10 * BATCH_SIZE, WIDTH, generator=g)
Y = torch.randn(10 * BATCH_SIZE, generator=g)
X_val = torch.randn(8, WIDTH, generator=g)
Y_val = torch.randn(8, generator=g)
loader = DataLoader(TensorDataset(X, Y), batch_size=BATCH_SIZE, shuffle=False)

model = WideMLP(WIDTH, N_LAYERS).to(device)
init_params = _snapshot(model)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.95)


@torch.no_grad()
def evaluate():
    model.eval()
    loss = F.mse_loss(model(X_val.to(device)), Y_val.to(device)).item()
    model.train()
    return loss


log_at = []
step = 0
for epoch in range(EPOCHS):
    for xb, yb in loader:
        xb, yb = xb.to(device), yb.to(device)
        pred = model(xb)
        loss = F.mse_loss(pred, yb)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        scheduler.step()
        step += 1
        if step % LOG_EVERY == 0:
            print(f"step {step} loss {loss.item():.4f}")
            log_at.append(_N_UPDATES)

_emit_result(model, optimizer, loss, init_params, evaluate, log_at, scheduler=scheduler, counter=step)
