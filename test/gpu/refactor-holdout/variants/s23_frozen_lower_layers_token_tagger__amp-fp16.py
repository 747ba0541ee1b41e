"""Token tagger on a custom transformer whose embedding and lower half are frozen.

The embedding and the first N_FROZEN blocks get requires_grad_(False); the optimizer only sees
trainable parameters (filter on requires_grad). The frozen blocks' outputs carry no autograd
history, so the first trainable block receives an input that does not require grad.
Loop in main(), AdamW, CosineAnnealingLR per step, clipping, logging every LOG_EVERY steps.
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
BATCH_SIZE = 16
SEQ_LEN = 512
D_MODEL = 1024
N_HEADS = 16
N_LAYERS = 12
N_FROZEN = 6
VOCAB = 16000
NUM_TAGS = 17
EPOCHS = 2
LOG_EVERY = 4


class EncoderBlock(nn.Module):
    def __init__(self, d_model, n_heads, d_ff):
        super().__init__()
        self.n_heads = n_heads
        self.ln1 = nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)
        self.ln2 = nn.LayerNorm(d_model)
        self.fc1 = nn.Linear(d_model, d_ff)
        self.fc2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        b, t, d = x.shape
        qkv = self.qkv(self.ln1(x)).view(b, t, 3, self.n_heads, d // self.n_heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2])
        x = x + self.out(a.transpose(1, 2).reshape(b, t, d))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, D_MODEL)
        self.pos = nn.Embedding(SEQ_LEN, D_MODEL)
        self.blocks = nn.ModuleList([EncoderBlock(D_MODEL, N_HEADS, 4 * D_MODEL) for _ in range(N_LAYERS)])
        self.norm = nn.LayerNorm(D_MODEL)
        self.classifier = nn.Linear(D_MODEL, NUM_TAGS)

    def forward(self, ids):
        x = self.embed(ids) + self.pos(torch.arange(ids.size(1), device=ids.device))
        for block in self.blocks:
            x = block(x)
        return self.classifier(self.norm(x))


def main():
    torch.manual_seed(0)
    device = torch.device("cuda")
    g = torch.Generator().manual_seed(91)
    n = 10 * BATCH_SIZE
    ids = torch.randint(0, VOCAB, (n, SEQ_LEN), generator=g)
    tags = torch.randint(0, NUM_TAGS, (n, SEQ_LEN), generator=g)
    val_ids = torch.randint(0, VOCAB, (4, SEQ_LEN), generator=g)
    val_tags = torch.randint(0, NUM_TAGS, (4, SEQ_LEN), generator=g)
    loader = DataLoader(TensorDataset(ids, tags), batch_size=BATCH_SIZE, shuffle=False)

    model = Tagger().to(device)
    model.embed.requires_grad_(False)
    model.pos.requires_grad_(False)
    for block in model.blocks[:N_FROZEN]:
        block.requires_grad_(False)
    init_params = _snapshot(model)

    optimizer = torch.optim.AdamW(filter(lambda p: p.requires_grad, model.parameters()), lr=2e-4, weight_decay=0.01)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=EPOCHS * len(loader), eta_min=2e-5)

    @torch.no_grad()
    def evaluate():
        model.eval()
        logits = model(val_ids.to(device))
        model.train()
        return F.cross_entropy(logits.reshape(-1, NUM_TAGS), val_tags.to(device).reshape(-1)).item()

    log_at = []
    step = 0
    scaler = torch.amp.GradScaler("cuda")
    for epoch in range(EPOCHS):
        model.train()
        for tok, tag in loader:
            tok, tag = tok.to(device), tag.to(device)
            with torch.autocast(device_type="cuda", dtype=torch.float16):
                logits = model(tok)
                loss = F.cross_entropy(logits.reshape(-1, NUM_TAGS), tag.reshape(-1))
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()
            step += 1
            if step % LOG_EVERY == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}")
                log_at.append(_N_UPDATES)

    _emit_result(model, optimizer, loss, init_params, evaluate, log_at, scheduler=scheduler, counter=step)


if __name__ == "__main__":
    main()
