"""nanoGPT-style fp32 GPT: manual warmup+cosine LR written into param_groups every iteration.

`while True:` inside train(), iter_num counts optimizer steps, get_lr(iter_num) sets the LR at
the top of each iteration, the loop `return`s once iter_num reaches max_iters. Blocks appended to
an nn.ModuleList in a loop, weight tying, a DataLoaderLite-style token stream (B, T constants),
clipping, logging every log_interval iterations (before the increment).
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
B = 8
T = 1024
max_iters = 20
warmup_iters = 4
max_lr = 6e-4
min_lr = max_lr * 0.1
lr_decay_iters = max_iters
log_interval = 5
device = "cuda"


@dataclass
class GPTConfig:
    block_size: int = 1024
    vocab_size: int = 8192
    n_layer: int = 12
    n_head: int = 12
    n_embd: int = 768


class CausalSelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd)
        self.n_head = config.n_head
        self.n_embd = config.n_embd

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.n_embd)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = nn.LayerNorm(config.n_embd)
        self.mlp = nn.Sequential(
            nn.Linear(config.n_embd, 4 * config.n_embd),
            nn.GELU(approximate="tanh"),
            nn.Linear(4 * config.n_embd, config.n_embd),
        )

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x


class GPT(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.wte = nn.Embedding(config.vocab_size, config.n_embd)
        self.wpe = nn.Embedding(config.block_size, config.n_embd)
        self.h = nn.ModuleList()
        for _ in range(config.n_layer):
            self.h.append(Block(config))
        self.ln_f = nn.LayerNorm(config.n_embd)
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.wte.weight = self.lm_head.weight
        self.apply(self._init_weights)

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx, targets=None):
        _, t = idx.size()
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for block in self.h:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss


class DataLoaderLite:
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


def get_lr(it):
    if it < warmup_iters:
        return max_lr * (it + 1) / warmup_iters
    if it > lr_decay_iters:
        return min_lr
    decay_ratio = (it - warmup_iters) / (lr_decay_iters - warmup_iters)
    coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
    return min_lr + coeff * (max_lr - min_lr)


def train():
    torch.manual_seed(1337)
    g = torch.Generator().manual_seed(1)
    tokens = torch.randint(0, GPTConfig.vocab_size, (30 * B * T + 1,), generator=g)
    val_tokens = torch.randint(0, GPTConfig.vocab_size, (2 * T + 1,), generator=g)
    train_loader = DataLoaderLite(tokens, B=B // 4, T=T)

    model = GPT(GPTConfig())
    model.to(device)
    init_params = _snapshot(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=max_lr, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1)

    @torch.no_grad()
    def estimate_loss():
        model.eval()
        x = val_tokens[:-1].view(2, T).to(device)
        y = val_tokens[1:].view(2, T).to(device)
        _, loss = model(x, y)
        model.train()
        return loss.item()

    log_at = []
    iter_num = 0
    model.train()
    accumulation_steps = 4  # effective batch size: 2 x 4 = 8 samples per optimizer step
    micro_step = 0
    while True:
        lr = get_lr(iter_num)
        for param_group in optimizer.param_groups:
            param_group["lr"] = lr

        x, y = train_loader.next_batch()
        x, y = x.to(device), y.to(device)
        logits, loss = model(x, y)
        if micro_step % accumulation_steps == 0:
            optimizer.zero_grad(set_to_none=True)
        (loss / accumulation_steps).backward()
        micro_step += 1
        if micro_step % accumulation_steps == 0:
            norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()

            if iter_num % log_interval == 0:
                print(f"iter {iter_num}: loss {loss.item():.4f}, lr {lr:.4e}, norm {norm.item():.3f}")
                log_at.append(_N_UPDATES)
            iter_num += 1
            if iter_num >= max_iters:
                return model, optimizer, loss, init_params, estimate_loss, log_at, iter_num
    if micro_step % accumulation_steps != 0:
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.grad.mul_(accumulation_steps / (micro_step % accumulation_steps))
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()

        if iter_num % log_interval == 0:
            print(f"iter {iter_num}: loss {loss.item():.4f}, lr {lr:.4e}, norm {norm.item():.3f}")
            log_at.append(_N_UPDATES)
        iter_num += 1
        if iter_num >= max_iters:
            return model, optimizer, loss, init_params, estimate_loss, log_at, iter_num


if __name__ == "__main__":
    model, optimizer, loss, init_params, estimate_loss, log_at, iter_num = train()
    _emit_result(model, optimizer, loss, init_params, estimate_loss, log_at, counter=iter_num)
