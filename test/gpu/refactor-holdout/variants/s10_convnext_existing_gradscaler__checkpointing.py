"""torchvision ConvNeXt-Tiny (weights=None) that ALREADY trains with fp16 autocast + GradScaler.

The GradScaler is created once, before the epoch loop; the loop unscales before clipping.
Per-step CosineAnnealingLR, logging every LOG_EVERY steps, a half-size final batch.
"""
import json
import math
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
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

BATCH_SIZE = 128
IMAGE_SIZE = 128
EPOCHS = 2
LOG_EVERY = 3


def main():
    torch.manual_seed(0)
    device = torch.device("cuda")

    g = torch.Generator().manual_seed(21)
    n = 4 * BATCH_SIZE + BATCH_SIZE // 2
    x = torch.randn(n, 3, IMAGE_SIZE, IMAGE_SIZE, generator=g)
    y = torch.randint(0, 10, (n,), generator=g)
    x_val = torch.randn(32, 3, IMAGE_SIZE, IMAGE_SIZE, generator=g)
    y_val = torch.randint(0, 10, (32,), generator=g)
    loader = DataLoader(TensorDataset(x, y), batch_size=BATCH_SIZE, shuffle=False)

    model = torchvision.models.convnext_tiny(weights=None, num_classes=10, stochastic_depth_prob=0.0).to(device)
    from functools import partial
    from torch.utils.checkpoint import checkpoint
    for _block in [*model.features[1], *model.features[3], *model.features[5], *model.features[7]]:  # gradient checkpointing: activations recomputed in backward
        _block.forward = partial(checkpoint, _block.forward, use_reentrant=False)
    init_params = _snapshot(model)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.05)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=EPOCHS * len(loader), eta_min=1e-5)
    scaler = torch.amp.GradScaler("cuda")

    @torch.no_grad()
    def evaluate():
        model.eval()
        with torch.autocast(device_type="cuda", dtype=torch.float16):
            out = model(x_val.to(device))
        model.train()
        return F.cross_entropy(out.float(), y_val.to(device)).item()

    log_at = []
    step = 0
    for epoch in range(EPOCHS):
        model.train()
        for images, targets in loader:
            images = images.to(device, non_blocking=True)
            targets = targets.to(device, non_blocking=True)
            optimizer.zero_grad(set_to_none=True)
            with torch.autocast(device_type="cuda", dtype=torch.float16):
                logits = model(images)
                loss = criterion(logits, targets)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=2.0)
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()
            step += 1
            if step % LOG_EVERY == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f} scale {scaler.get_scale():.0f}")
                log_at.append(_N_UPDATES)

    _emit_result(model, optimizer, loss, init_params, evaluate, log_at, scheduler=scheduler, counter=step)


if __name__ == "__main__":
    main()
