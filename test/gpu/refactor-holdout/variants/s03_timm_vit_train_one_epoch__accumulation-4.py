"""timm ViT-S/16 (pretrained=False) trained with a timm-style train_one_epoch().

The model name and all sizes are argparse defaults (with dest= renames); the loop lives in
train_one_epoch(), called once per epoch from main(); timm's CosineLRScheduler is stepped
per update with step_update(num_updates) where num_updates starts at epoch * len(loader);
logging uses the batch index; gradient clipping; label-smoothing loss.
"""
import argparse
import json
import math
import os
import time

import timm
import torch
import torch.nn.functional as F
from timm.loss import LabelSmoothingCrossEntropy
from timm.scheduler import CosineLRScheduler
from torch.optim.optimizer import register_optimizer_step_post_hook
from torch.utils.data import DataLoader, TensorDataset
accumulation_steps = 4  # effective batch size: 24 x 4 = 96 samples per optimizer step

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
device = torch.device("cuda")


def parse_args():
    parser = argparse.ArgumentParser(description="ViT training")
    parser.add_argument("--model", default="vit_small_patch16_224", type=str)
    parser.add_argument("--num-classes", type=int, default=100)
    parser.add_argument("-b", "--batch-size", type=int, default=96, dest="batch_size")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=5e-4)
    parser.add_argument("--weight-decay", type=float, default=0.05)
    parser.add_argument("--warmup-updates", type=int, default=3)
    parser.add_argument("--min-lr", type=float, default=1e-5)
    parser.add_argument("--clip-grad", type=float, default=1.0)
    parser.add_argument("--log-interval", type=int, default=2)
    parser.add_argument("--smoothing", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=42)
    return parser.parse_args()


def train_one_epoch(epoch, model, loader, optimizer, loss_fn, args, lr_scheduler=None, log_at=None):
    model.train()
    num_updates = epoch * -(-len(loader) // accumulation_steps)
    last_loss = None
    micro_step = 0
    for micro_index, (input, target) in enumerate(loader):
        batch_idx = micro_index // accumulation_steps  # the optimizer step this micro-batch belongs to
        input = input.to(device, non_blocking=True)
        target = target.to(device, non_blocking=True)

        output = model(input)
        loss = loss_fn(output, target)

        if micro_step % accumulation_steps == 0:
            optimizer.zero_grad()
        (loss / accumulation_steps).backward()
        micro_step += 1
        if micro_step % accumulation_steps == 0:
            if args.clip_grad is not None:
                torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip_grad)
            optimizer.step()

            num_updates += 1
            if batch_idx % args.log_interval == 0:
                lrl = [param_group["lr"] for param_group in optimizer.param_groups]
                lr = sum(lrl) / len(lrl)
                print(f"Train: {epoch} [{batch_idx:>4d}/{len(loader)}]  Loss: {loss.item():#.3g}  LR: {lr:.3e}")
                if log_at is not None:
                    log_at.append(_N_UPDATES)

            if lr_scheduler is not None:
                lr_scheduler.step_update(num_updates=num_updates)
        last_loss = loss.detach()
    if micro_step % accumulation_steps != 0:
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.grad.mul_(accumulation_steps / (micro_step % accumulation_steps))
        if args.clip_grad is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip_grad)
        optimizer.step()

        num_updates += 1
        if batch_idx % args.log_interval == 0:
            lrl = [param_group["lr"] for param_group in optimizer.param_groups]
            lr = sum(lrl) / len(lrl)
            print(f"Train: {epoch} [{batch_idx:>4d}/{len(loader)}]  Loss: {loss.item():#.3g}  LR: {lr:.3e}")
            if log_at is not None:
                log_at.append(_N_UPDATES)

        if lr_scheduler is not None:
            lr_scheduler.step_update(num_updates=num_updates)

    return last_loss, num_updates


def main():
    args = parse_args()
    torch.manual_seed(args.seed)

    g = torch.Generator().manual_seed(args.seed)
    n_train = 5 * args.batch_size + args.batch_size // 2
    images = torch.randn(n_train, 3, 224, 224, generator=g)
    targets = torch.randint(0, args.num_classes, (n_train,), generator=g)
    val_images = torch.randn(32, 3, 224, 224, generator=g)
    val_targets = torch.randint(0, args.num_classes, (32,), generator=g)
    loader = DataLoader(TensorDataset(images, targets), batch_size=args.batch_size // 4, shuffle=False)

    model = timm.create_model(args.model, pretrained=False, num_classes=args.num_classes)
    model.to(device)
    init_params = _snapshot(model)

    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    updates_per_epoch = -(-len(loader) // accumulation_steps)
    lr_scheduler = CosineLRScheduler(
        optimizer,
        t_initial=args.epochs * updates_per_epoch,
        lr_min=args.min_lr,
        warmup_t=args.warmup_updates,
        warmup_lr_init=1e-6,
        t_in_epochs=False,
    )
    loss_fn = LabelSmoothingCrossEntropy(smoothing=args.smoothing).to(device)

    @torch.no_grad()
    def validate():
        model.eval()
        out = model(val_images.to(device))
        model.train()
        return F.cross_entropy(out, val_targets.to(device)).item()

    log_at = []
    num_updates = 0
    for epoch in range(args.epochs):
        last_loss, num_updates = train_one_epoch(
            epoch, model, loader, optimizer, loss_fn, args, lr_scheduler=lr_scheduler, log_at=log_at
        )

    _emit_result(model, optimizer, last_loss, init_params, validate, log_at, counter=num_updates)


if __name__ == "__main__":
    main()
