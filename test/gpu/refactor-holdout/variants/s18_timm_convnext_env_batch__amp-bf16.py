"""timm ConvNeXt-Tiny (pretrained=False); batch size from os.environ, the rest from main()'s defaults.

`batch_size = int(os.environ.get("BS", "128"))`, model name / lr / epochs as keyword defaults of
main(); LayerNorm-based model (no BatchNorm); AdamW with CosineAnnealingLR per step sized from
len(loader); evaluation of the last batch's accuracy kept as a Python float. Half-size final batch.
"""
import json
import math
import os
import time

import timm
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


def main(model_name="convnext_tiny", lr=1e-3, epochs=2, image_size=128, num_classes=100, log_every=3):
    batch_size = int(os.environ.get("BS", "128"))
    torch.manual_seed(0)
    device = torch.device("cuda")

    g = torch.Generator().manual_seed(55)
    n = 3 * batch_size + batch_size // 2
    x = torch.randn(n, 3, image_size, image_size, generator=g)
    y = torch.randint(0, num_classes, (n,), generator=g)
    x_val = torch.randn(32, 3, image_size, image_size, generator=g)
    y_val = torch.randint(0, num_classes, (32,), generator=g)
    train_loader = DataLoader(TensorDataset(x, y), batch_size=batch_size, shuffle=False)

    model = timm.create_model(model_name, pretrained=False, num_classes=num_classes).to(device)
    init_params = _snapshot(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.05)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs * len(train_loader), eta_min=1e-5)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)

    @torch.no_grad()
    def evaluate():
        model.eval()
        out = model(x_val.to(device))
        model.train()
        return F.cross_entropy(out, y_val.to(device)).item()

    log_at = []
    global_step = 0
    for epoch in range(epochs):
        model.train()
        correct = 0
        seen = 0
        for inputs, targets in train_loader:
            inputs, targets = inputs.to(device), targets.to(device)
            optimizer.zero_grad()
            with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
                outputs = model(inputs)
                loss = criterion(outputs, targets)
            loss.backward()
            optimizer.step()
            scheduler.step()
            global_step += 1
            correct += (outputs.argmax(dim=1) == targets).sum().item()
            seen += targets.size(0)
            if global_step % log_every == 0:
                print(f"epoch {epoch} step {global_step} loss {loss.item():.4f} acc {correct / seen:.3f}")
                log_at.append(_N_UPDATES)

    _emit_result(model, optimizer, loss, init_params, evaluate, log_at, scheduler=scheduler, counter=global_step)


if __name__ == "__main__":
    main()
