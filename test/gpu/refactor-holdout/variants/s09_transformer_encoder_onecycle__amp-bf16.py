"""nn.TransformerEncoder sequence classifier configured by a @dataclass, OneCycleLR per step.

OneCycleLR's total_steps is computed from len(train_loader); stepping it past total_steps
raises. Loop in main(), gradient clipping, logging every cfg.log_every steps, a half-size
final batch per epoch.
"""
import json
import math
import os
import time
from dataclasses import dataclass

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


@dataclass
class TrainConfig:
    batch_size: int = 32
    seq_len: int = 512
    vocab_size: int = 16000
    d_model: int = 512
    n_heads: int = 8
    d_ff: int = 2048
    n_layers: int = 8
    num_classes: int = 20
    epochs: int = 3
    max_lr: float = 1e-3
    weight_decay: float = 0.01
    grad_clip: float = 0.5
    log_every: int = 4
    seed: int = 0


class SeqClassifier(nn.Module):
    def __init__(self, cfg: TrainConfig):
        super().__init__()
        self.embed = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.pos = nn.Parameter(torch.zeros(1, cfg.seq_len, cfg.d_model))
        layer = nn.TransformerEncoderLayer(
            d_model=cfg.d_model,
            nhead=cfg.n_heads,
            dim_feedforward=cfg.d_ff,
            dropout=0.0,
            activation="gelu",
            batch_first=True,
            norm_first=True,
        )
        self.encoder = nn.TransformerEncoder(layer, num_layers=cfg.n_layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, cfg.num_classes)

    def forward(self, tokens):
        x = self.embed(tokens) + self.pos[:, : tokens.size(1)]
        x = self.encoder(x)
        return self.head(self.norm(x).mean(dim=1))


def main(cfg: TrainConfig = TrainConfig()):
    torch.manual_seed(cfg.seed)
    device = torch.device("cuda")

    g = torch.Generator().manual_seed(99)
    n_train = 9 * cfg.batch_size + cfg.batch_size // 2
    tokens = torch.randint(0, cfg.vocab_size, (n_train, cfg.seq_len), generator=g)
    labels = torch.randint(0, cfg.num_classes, (n_train,), generator=g)
    val_tokens = torch.randint(0, cfg.vocab_size, (16, cfg.seq_len), generator=g)
    val_labels = torch.randint(0, cfg.num_classes, (16,), generator=g)
    train_loader = DataLoader(TensorDataset(tokens, labels), batch_size=cfg.batch_size, shuffle=False)

    model = SeqClassifier(cfg).to(device)
    init_params = _snapshot(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.max_lr, weight_decay=cfg.weight_decay)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(
        optimizer, max_lr=cfg.max_lr, total_steps=cfg.epochs * len(train_loader), pct_start=0.2
    )
    loss_fn = nn.CrossEntropyLoss()

    @torch.no_grad()
    def evaluate():
        model.eval()
        out = model(val_tokens.to(device))
        model.train()
        return F.cross_entropy(out, val_labels.to(device)).item()

    step = 0
    log_at = []
    for epoch in range(cfg.epochs):
        model.train()
        for tok, lab in train_loader:
            tok, lab = tok.to(device), lab.to(device)
            optimizer.zero_grad()
            with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
                logits = model(tok)
                loss = loss_fn(logits, lab)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
            optimizer.step()
            scheduler.step()
            step += 1
            if step % cfg.log_every == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f} lr {scheduler.get_last_lr()[0]:.2e}")
                log_at.append(_N_UPDATES)

    _emit_result(model, optimizer, loss, init_params, evaluate, log_at, scheduler=scheduler, counter=step)


if __name__ == "__main__":
    main()
