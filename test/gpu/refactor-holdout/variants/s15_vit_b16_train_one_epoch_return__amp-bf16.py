"""torchvision ViT-B/16 (weights=None, image_size=160) with a train_one_epoch() that returns early.

train_one_epoch() is called once per epoch and `return`s from inside its batch loop as soon as
global_step reaches args.max_steps; otherwise it returns after the loop. SGD with momentum
(sensitive to the loss scale), LambdaLR warmup + cosine per step, label smoothing, logging every
--print-freq optimizer steps, a half-size final batch per epoch.
"""
import argparse
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
device = torch.device("cuda")


def get_args_parser():
    parser = argparse.ArgumentParser(description="ViT classification training", add_help=True)
    parser.add_argument("--model", default="vit_b_16", type=str)
    parser.add_argument("-b", "--batch-size", default=64, type=int)
    parser.add_argument("--epochs", default=10, type=int)
    parser.add_argument("--max-steps", default=15, type=int)
    parser.add_argument("--lr", default=0.01, type=float)
    parser.add_argument("--momentum", default=0.9, type=float)
    parser.add_argument("--wd", "--weight-decay", default=1e-4, type=float, dest="weight_decay")
    parser.add_argument("--warmup-steps", default=3, type=int)
    parser.add_argument("--label-smoothing", default=0.1, type=float)
    parser.add_argument("--print-freq", default=4, type=int)
    parser.add_argument("--image-size", default=160, type=int)
    return parser


def train_one_epoch(model, criterion, optimizer, scheduler, data_loader, epoch, global_step, args, log_at):
    model.train()
    loss = None
    for image, target in data_loader:
        image, target = image.to(device), target.to(device)
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            output = model(image)
            loss = criterion(output, target)

        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
        global_step += 1

        if global_step % args.print_freq == 0:
            print(f"Epoch: [{epoch}] step {global_step} loss {loss.item():.4f} lr {optimizer.param_groups[0]['lr']:.5f}")
            log_at.append(_N_UPDATES)
        if global_step >= args.max_steps:
            return global_step, loss, True
    return global_step, loss, False


def main(args):
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(77)
    n = 5 * args.batch_size + args.batch_size // 2
    images = torch.randn(n, 3, args.image_size, args.image_size, generator=g)
    targets = torch.randint(0, 10, (n,), generator=g)
    val_images = torch.randn(32, 3, args.image_size, args.image_size, generator=g)
    val_targets = torch.randint(0, 10, (32,), generator=g)
    data_loader = DataLoader(TensorDataset(images, targets), batch_size=args.batch_size, shuffle=False)

    model = torchvision.models.get_model(args.model, weights=None, num_classes=10, image_size=args.image_size)
    model.to(device)
    init_params = _snapshot(model)

    criterion = nn.CrossEntropyLoss(label_smoothing=args.label_smoothing)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum, weight_decay=args.weight_decay)

    def lr_lambda(step):
        if step < args.warmup_steps:
            return (step + 1) / args.warmup_steps
        progress = (step - args.warmup_steps) / max(1, args.max_steps - args.warmup_steps)
        return 0.1 + 0.9 * 0.5 * (1.0 + math.cos(math.pi * progress))

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda)

    @torch.no_grad()
    def evaluate():
        model.eval()
        out = model(val_images.to(device))
        model.train()
        return F.cross_entropy(out, val_targets.to(device)).item()

    log_at = []
    global_step = 0
    for epoch in range(args.epochs):
        global_step, loss, done = train_one_epoch(
            model, criterion, optimizer, scheduler, data_loader, epoch, global_step, args, log_at
        )
        if done:
            break

    _emit_result(model, optimizer, loss, init_params, evaluate, log_at, scheduler=scheduler, counter=global_step)


if __name__ == "__main__":
    main(get_args_parser().parse_args())
