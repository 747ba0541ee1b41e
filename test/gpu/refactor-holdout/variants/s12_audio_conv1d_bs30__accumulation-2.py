"""1-D residual ConvNet keyword spotter on raw waveforms; batch size 30 (not divisible by 4).

The batch size is an argparse default with a dest= rename (--batch-size -> args.bs).
GroupNorm (per-sample statistics), AdamW, LambdaLR warmup + linear decay per step (sized from len(loader)), `for step, (wave, label)
in enumerate(loader)` with a separate global_step counter for logging. TF32 is disabled for
cuDNN so that fp32 results do not depend on the micro-batch shape.
"""
import argparse
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
torch.backends.cudnn.allow_tf32 = False


class ResBlock1d(nn.Module):
    def __init__(self, channels, kernel_size=3, dilation=1):
        super().__init__()
        pad = dilation * (kernel_size // 2)
        self.conv1 = nn.Conv1d(channels, channels, kernel_size, padding=pad, dilation=dilation)
        self.norm1 = nn.GroupNorm(8, channels)
        self.conv2 = nn.Conv1d(channels, channels, kernel_size, padding=kernel_size // 2)
        self.norm2 = nn.GroupNorm(8, channels)

    def forward(self, x):
        h = F.gelu(self.norm1(self.conv1(x)))
        h = self.norm2(self.conv2(h))
        return F.gelu(x + h)


class AudioNet(nn.Module):
    def __init__(self, n_classes=35, channels=256, n_blocks=8):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv1d(1, channels, kernel_size=10, stride=5), nn.GroupNorm(8, channels), nn.GELU())
        self.blocks = nn.Sequential(*[ResBlock1d(channels, dilation=2 ** (i % 4)) for i in range(n_blocks)])
        self.head = nn.Linear(channels, n_classes)

    def forward(self, wave):
        x = self.blocks(self.stem(wave))
        return self.head(x.mean(dim=-1))


def get_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch-size", type=int, default=30, dest="bs")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--warmup", type=int, default=4)
    parser.add_argument("--sample-rate", type=int, default=16000)
    parser.add_argument("--log-every", type=int, default=4)
    return parser.parse_args()


def main():
    args = get_args()
    torch.manual_seed(0)
    device = torch.device("cuda")

    g = torch.Generator().manual_seed(31)
    n = 12 * args.bs
    waves = torch.randn(n, 1, args.sample_rate, generator=g)
    labels = torch.randint(0, 35, (n,), generator=g)
    val_waves = torch.randn(20, 1, args.sample_rate, generator=g)
    val_labels = torch.randint(0, 35, (20,), generator=g)
    loader = DataLoader(TensorDataset(waves, labels), batch_size=args.bs // 2, shuffle=False)

    model = AudioNet().to(device)
    init_params = _snapshot(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    accumulation_steps = 2  # effective batch size: 15 x 2 = 30 samples per optimizer step
    total_steps = args.epochs * -(-len(loader) // accumulation_steps)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min((s + 1) / args.warmup, max(0.05, 1.0 - s / total_steps))
    )

    @torch.no_grad()
    def evaluate():
        model.eval()
        out = model(val_waves.to(device))
        model.train()
        return F.cross_entropy(out, val_labels.to(device)).item()

    global_step = 0
    log_at = []
    for epoch in range(args.epochs):
        model.train()
        micro_step = 0
        for micro_index, (wave, label) in enumerate(loader):
            step = micro_index // accumulation_steps  # the optimizer step this micro-batch belongs to
            wave, label = wave.to(device), label.to(device)
            logits = model(wave)
            loss = F.cross_entropy(logits, label)
            if micro_step % accumulation_steps == 0:
                optimizer.zero_grad()
            (loss / accumulation_steps).backward()
            micro_step += 1
            if micro_step % accumulation_steps == 0:
                optimizer.step()
                scheduler.step()
                global_step += 1
                if global_step % args.log_every == 0:
                    print(f"epoch {epoch} batch {step} step {global_step} loss {loss.item():.4f}")
                    log_at.append(_N_UPDATES)
        if micro_step % accumulation_steps != 0:
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        p.grad.mul_(accumulation_steps / (micro_step % accumulation_steps))
            optimizer.step()
            scheduler.step()
            global_step += 1
            if global_step % args.log_every == 0:
                print(f"epoch {epoch} batch {step} step {global_step} loss {loss.item():.4f}")
                log_at.append(_N_UPDATES)

    _emit_result(model, optimizer, loss, init_params, evaluate, log_at, scheduler=scheduler, counter=global_step)


if __name__ == "__main__":
    main()
