"""BatchNorm CNN (conv_bn helper) with an evaluation pass every EVAL_EVERY optimizer steps.

The evaluation inside the training loop switches to model.eval(), runs under torch.no_grad(),
keeps argmax predictions for an accuracy metric, then switches back to train mode. LinearLR
decay per step sized from len(train_loader), SGD + momentum, a half-size final batch per epoch.
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

BATCH_SIZE = 256
EPOCHS = 3
EVAL_EVERY = 5
NUM_CLASSES = 100


def conv_bn(c_in, c_out, stride=1):
    return nn.Sequential(
        nn.Conv2d(c_in, c_out, kernel_size=3, stride=stride, padding=1, bias=False),
        nn.BatchNorm2d(c_out),
        nn.ReLU(inplace=True),
    )


class Net(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.features = nn.Sequential(
            conv_bn(3, 64),
            conv_bn(64, 64),
            conv_bn(64, 128, stride=2),
            conv_bn(128, 128),
            conv_bn(128, 256, stride=2),
            conv_bn(256, 256),
            conv_bn(256, 512, stride=2),
            conv_bn(512, 512),
        )
        self.classifier = nn.Linear(512, num_classes)

    def forward(self, x):
        x = self.features(x)
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.classifier(x)


def main():
    torch.manual_seed(0)
    device = torch.device("cuda")
    g = torch.Generator().manual_seed(71)
    n = 4 * BATCH_SIZE + BATCH_SIZE // 2
    x = torch.randn(n, 3, 96, 96, generator=g)
    y = torch.randint(0, NUM_CLASSES, (n,), generator=g)
    x_val = torch.randn(256, 3, 96, 96, generator=g)
    y_val = torch.randint(0, NUM_CLASSES, (256,), generator=g)
    train_loader = DataLoader(TensorDataset(x, y), batch_size=BATCH_SIZE, shuffle=False)
    val_loader = DataLoader(TensorDataset(x_val, y_val), batch_size=128, shuffle=False)

    model = Net(NUM_CLASSES).to(device)
    from functools import partial
    from torch.utils.checkpoint import checkpoint
    # BatchNorm running statistics are updated again when a block is recomputed in backward
    for _block in [*model.features[0:8]]:  # gradient checkpointing: activations recomputed in backward
        _block.forward = partial(checkpoint, _block.forward, use_reentrant=False)
    init_params = _snapshot(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
    scheduler = torch.optim.lr_scheduler.LinearLR(
        optimizer, start_factor=1.0, end_factor=0.05, total_iters=EPOCHS * len(train_loader)
    )
    criterion = nn.CrossEntropyLoss()

    def validate():
        model.eval()
        preds, total_loss = [], 0.0
        with torch.no_grad():
            for xb, yb in val_loader:
                xb, yb = xb.to(device), yb.to(device)
                logits = model(xb)
                total_loss += F.cross_entropy(logits, yb, reduction="sum").item()
                preds.append(logits.argmax(dim=1))
        model.train()
        acc = (torch.cat(preds) == y_val.to(device)).float().mean().item()
        return total_loss / len(val_loader.dataset), acc

    log_at = []
    step = 0
    for epoch in range(EPOCHS):
        model.train()
        for inputs, targets in train_loader:
            inputs, targets = inputs.to(device), targets.to(device)
            optimizer.zero_grad()
            loss = criterion(model(inputs), targets)
            loss.backward()
            optimizer.step()
            scheduler.step()
            step += 1
            if step % EVAL_EVERY == 0:
                val_loss, val_acc = validate()
                print(f"epoch {epoch} step {step} train {loss.item():.4f} val {val_loss:.4f} acc {val_acc:.3f}")
                log_at.append(_N_UPDATES)

    _emit_result(model, optimizer, loss, init_params, lambda: validate()[0], log_at, scheduler=scheduler, counter=step)


if __name__ == "__main__":
    main()
