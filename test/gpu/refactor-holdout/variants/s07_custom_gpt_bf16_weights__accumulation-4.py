"""nanoGPT-like custom transformer LM cast to bf16 with model.to(torch.bfloat16), module level.

Weights are bf16 (pure-bf16 training). The loop is a module-level `for it in range(MAX_ITERS)`
that pulls batches from a sequential token-stream loader (B, T module constants), with a
per-iteration CosineAnnealingLR, clipping and logging every LOG_INTERVAL iterations.
"""
import json
import math
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.optimizer import register_optimizer_step_post_hook

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
torch.manual_seed(1337)
device = "cuda"

B = 8  # micro-batch size
T = 1024  # sequence length
VOCAB_SIZE = 16384
N_LAYER = 12
N_HEAD = 16
N_EMBD = 1024
MAX_ITERS = 24
LEARNING_RATE = 3e-4
LOG_INTERVAL = 4


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head):
        super().__init__()
        assert n_embd % n_head == 0
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.n_head = n_head

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class MLP(nn.Module):
    def __init__(self, n_embd):
        super().__init__()
        self.c_fc = nn.Linear(n_embd, 4 * n_embd)
        self.gelu = nn.GELU(approximate="tanh")
        self.c_proj = nn.Linear(4 * n_embd, n_embd)

    def forward(self, x):
        return self.c_proj(self.gelu(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, n_embd, n_head):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = MLP(n_embd)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x


class GPT(nn.Module):
    def __init__(self, vocab_size, block_size, n_layer, n_head, n_embd):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.wpe = nn.Embedding(block_size, n_embd)
        self.h = nn.ModuleList([Block(n_embd, n_head) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(n_embd)
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
        self.wte.weight = self.lm_head.weight  # weight tying

    def forward(self, idx, targets=None):
        _, t = idx.size()
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for block in self.h:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.float().view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss


class TokenStream:
    """Sequential loader over one long token stream (like nanoGPT's DataLoaderLite)."""

    def __init__(self, tokens, B, T):
        self.tokens = tokens
        self.B = B
        self.T = T
        self.current_position = 0

    def next_batch(self):
        B, T = self.B, self.T
        buf = self.tokens[self.current_position : self.current_position + B * T + 1]
        x = buf[:-1].view(B, T)
        y = buf[1:].view(B, T)
        self.current_position += B * T
        if self.current_position + (B * T + 1) > len(self.tokens):
            self.current_position = 0
        return x, y


gen = torch.Generator().manual_seed(2024)
tokens = torch.randint(0, VOCAB_SIZE, (32 * B * T + 1,), generator=gen)
val_tokens = torch.randint(0, VOCAB_SIZE, (2 * T + 1,), generator=gen)
train_loader = TokenStream(tokens, B=B // 4, T=T)

model = GPT(VOCAB_SIZE, T, N_LAYER, N_HEAD, N_EMBD)
model.to(device)
model.to(torch.bfloat16)
init_params = _snapshot(model)

optimizer = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE, betas=(0.9, 0.95), weight_decay=0.1)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=MAX_ITERS, eta_min=LEARNING_RATE / 10)


@torch.no_grad()
def estimate_loss():
    model.eval()
    x = val_tokens[:-1].view(2, T).to(device)
    y = val_tokens[1:].view(2, T).to(device)
    _, loss = model(x, y)
    model.train()
    return loss.item()


log_at = []
model.train()
accumulation_steps = 4  # effective batch size: 2 x 4 = 8 samples per optimizer step
micro_step = 0
for micro_index in range(MAX_ITERS * accumulation_steps):
    it = micro_index // accumulation_steps  # the optimizer step this micro-batch belongs to
    x, y = train_loader.next_batch()
    x, y = x.to(device), y.to(device)
    logits, loss = model(x, y)
    if micro_step % accumulation_steps == 0:
        optimizer.zero_grad(set_to_none=True)
    (loss / accumulation_steps).backward()
    micro_step += 1
    if micro_step % accumulation_steps == 0:
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        if it % LOG_INTERVAL == 0:
            print(f"iter {it}: loss {loss.item():.4f}, lr {scheduler.get_last_lr()[0]:.2e}")
            log_at.append(_N_UPDATES)
if micro_step % accumulation_steps != 0:
    for group in optimizer.param_groups:
        for p in group["params"]:
            if p.grad is not None:
                p.grad.mul_(accumulation_steps / (micro_step % accumulation_steps))
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    scheduler.step()
    if it % LOG_INTERVAL == 0:
        print(f"iter {it}: loss {loss.item():.4f}, lr {scheduler.get_last_lr()[0]:.2e}")
        log_at.append(_N_UPDATES)

_emit_result(model, optimizer, loss, init_params, estimate_loss, log_at, scheduler=scheduler, counter=MAX_ITERS)
