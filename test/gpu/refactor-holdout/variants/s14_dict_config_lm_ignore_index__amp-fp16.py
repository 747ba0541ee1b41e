"""Custom pre-LN transformer LM configured by a dict literal; prompt tokens masked with -100.

`config = dict(batch_size=..., seq_len=..., ...)` read as config["..."]; a positional-embedding
capacity (max_len=4096) that differs from the data's seq_len; blocks built with a list
comprehension into nn.ModuleList; F.cross_entropy(..., ignore_index=-100) where the first
prompt_len target positions of every sequence are ignored; get_linear_schedule_with_warmup
sized from len(loader); clipping; logging every log_every steps. Loop in main().
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
from transformers import get_linear_schedule_with_warmup

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
config = dict(
    batch_size=16,
    seq_len=512,
    max_len=4096,
    d_model=768,
    n_layers=10,
    n_heads=12,
    vocab_size=8192,
    lr=3e-4,
    weight_decay=0.1,
    warmup_steps=3,
    epochs=2,
    log_every=4,
    prompt_len=64,
    grad_clip=1.0,
)


class Block(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads = n_heads
        self.norm1 = nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.proj = nn.Linear(d_model, d_model, bias=False)
        self.norm2 = nn.LayerNorm(d_model)
        self.ff = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model))

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).chunk(3, dim=-1)
        q, k, v = (z.view(b, t, self.n_heads, d // self.n_heads).transpose(1, 2) for z in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.ff(self.norm2(x))


class TinyLM(nn.Module):
    def __init__(self, vocab_size, d_model, n_layers, n_heads, max_len):
        super().__init__()
        self.tok = nn.Embedding(vocab_size, d_model)
        self.pos = nn.Embedding(max_len, d_model)
        self.blocks = nn.ModuleList([Block(d_model, n_heads) for _ in range(n_layers)])
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size, bias=False)

    def forward(self, idx):
        t = idx.size(1)
        x = self.tok(idx) + self.pos(torch.arange(t, device=idx.device))
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.norm(x))


def make_split(n, seed):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, config["vocab_size"], (n, config["seq_len"] + 1), generator=g)
    x = ids[:, :-1].contiguous()
    y = ids[:, 1:].clone()
    y[:, : config["prompt_len"]] = -100
    return x, y


def main():
    torch.manual_seed(0)
    device = torch.device("cuda")
    x, y = make_split(9 * config["batch_size"] + config["batch_size"] // 2, seed=17)
    x_val, y_val = make_split(4, seed=18)
    train_loader = DataLoader(TensorDataset(x, y), batch_size=config["batch_size"], shuffle=False)

    model = TinyLM(config["vocab_size"], config["d_model"], config["n_layers"], config["n_heads"], config["max_len"]).to(device)
    init_params = _snapshot(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=config["lr"], weight_decay=config["weight_decay"])
    scheduler = get_linear_schedule_with_warmup(
        optimizer, num_warmup_steps=config["warmup_steps"], num_training_steps=config["epochs"] * len(train_loader) + 10
    )

    @torch.no_grad()
    def evaluate():
        model.eval()
        logits = model(x_val.to(device))
        model.train()
        return F.cross_entropy(logits.view(-1, logits.size(-1)), y_val.to(device).view(-1), ignore_index=-100).item()

    step = 0
    log_at = []
    scaler = torch.amp.GradScaler("cuda")
    for epoch in range(config["epochs"]):
        model.train()
        for xb, yb in train_loader:
            xb, yb = xb.to(device), yb.to(device)
            with torch.autocast(device_type="cuda", dtype=torch.float16):
                logits = model(xb)
                loss = F.cross_entropy(logits.view(-1, logits.size(-1)), yb.view(-1), ignore_index=-100)
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), config["grad_clip"])
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()
            step += 1
            if step % config["log_every"] == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}")
                log_at.append(_N_UPDATES)

    _emit_result(model, optimizer, loss, init_params, evaluate, log_at, scheduler=scheduler, counter=step)


if __name__ == "__main__":
    main()
