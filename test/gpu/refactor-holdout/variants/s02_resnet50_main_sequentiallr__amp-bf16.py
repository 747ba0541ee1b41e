"""torchvision ResNet-50 (weights=None) image classifier, loop inside main().

BatchNorm model (zero_init_residual=True), SGD + Nesterov, per-step SequentialLR (LinearLR warmup then cosine),
a half-size last batch, cudnn in deterministic mode, evaluation under no_grad at the end.
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


def make_data(n, image_size, num_classes, seed):
    g = torch.Generator().manual_seed(seed)
    images = torch.randn(n, 3, image_size, image_size, generator=g)
    labels = torch.randint(0, num_classes, (n,), generator=g)
    return images, labels


def main():
    torch.manual_seed(0)
    device = torch.device("cuda")
    batch_size = 64
    image_size = 160
    num_classes = 10
    epochs = 2
    warmup_iters = 3
    base_lr = 0.02

    images, labels = make_data(8 * batch_size + batch_size // 2, image_size, num_classes, seed=1)
    val_images, val_labels = make_data(32, image_size, num_classes, seed=2)
    train_loader = DataLoader(TensorDataset(images, labels), batch_size=batch_size, shuffle=False, drop_last=False)

    model = torchvision.models.resnet50(weights=None, num_classes=num_classes, zero_init_residual=True).to(device)
    init_params = _snapshot(model)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=base_lr, momentum=0.9, nesterov=True, weight_decay=5e-5)
    total_iters = epochs * len(train_loader)
    scheduler = torch.optim.lr_scheduler.SequentialLR(
        optimizer,
        schedulers=[
            torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=0.1, total_iters=warmup_iters),
            torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=total_iters - warmup_iters, eta_min=1e-4),
        ],
        milestones=[warmup_iters],
    )

    @torch.no_grad()
    def evaluate():
        model.eval()
        logits = model(val_images.to(device))
        model.train()
        return F.cross_entropy(logits, val_labels.to(device)).item()

    log_at = []
    iteration = 0
    for epoch in range(epochs):
        model.train()
        for inputs, targets in train_loader:
            inputs = inputs.to(device, non_blocking=True)
            targets = targets.to(device, non_blocking=True)
            with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
                outputs = model(inputs)
                loss = criterion(outputs, targets)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            scheduler.step()
            iteration += 1
            if iteration % 4 == 0:
                print(f"[{epoch}] iter {iteration} loss {loss.item():.4f} lr {optimizer.param_groups[0]['lr']:.5f}")
                log_at.append(_N_UPDATES)

    _emit_result(model, optimizer, loss, init_params, evaluate, log_at, scheduler=scheduler, counter=iteration)


if __name__ == "__main__":
    main()
