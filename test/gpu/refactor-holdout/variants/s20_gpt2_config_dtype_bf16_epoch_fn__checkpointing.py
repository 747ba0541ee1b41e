"""GPT-2 whose GPT2Config carries dtype="bfloat16", built with AutoModelForCausalLM.from_config(config).

from_config() follows the config's dtype, so the weights are bf16 even though no dtype= is
passed at the call site. The loop lives in train_one_epoch(), called once per epoch, with the
global step passed in and returned; cosine schedule with warmup from transformers; clipping.
"""
import json
import math
import os
import time

import torch
from torch.optim.optimizer import register_optimizer_step_post_hook
from torch.utils.data import DataLoader, TensorDataset
from transformers import AutoModelForCausalLM, GPT2Config, get_cosine_schedule_with_warmup

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
BATCH_SIZE = 8
CONTEXT = 1024
EPOCHS = 2
LOG_EVERY = 4


def train_one_epoch(model, loader, optimizer, scheduler, epoch, global_step, log_at):
    model.train()
    for (input_ids,) in loader:
        input_ids = input_ids.to(device)
        loss = model(input_ids, labels=input_ids).loss
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        global_step += 1
        if global_step % LOG_EVERY == 0:
            print(f"epoch {epoch} step {global_step} loss {loss.item():.4f}")
            log_at.append(_N_UPDATES)
    return global_step, loss


def main():
    torch.manual_seed(0)
    config = GPT2Config(
        vocab_size=16384,
        n_positions=CONTEXT,
        n_embd=1024,
        n_layer=12,
        n_head=16,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
        dtype="bfloat16",
    )
    model = AutoModelForCausalLM.from_config(config)
    model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    model = model.to(device)
    init_params = _snapshot(model)

    g = torch.Generator().manual_seed(5)
    ids = torch.randint(0, config.vocab_size, (11 * BATCH_SIZE, CONTEXT), generator=g)
    eval_ids = torch.randint(0, config.vocab_size, (2, CONTEXT), generator=g)
    loader = DataLoader(TensorDataset(ids), batch_size=BATCH_SIZE, shuffle=False)

    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-4, betas=(0.9, 0.95), weight_decay=0.1)
    scheduler = get_cosine_schedule_with_warmup(optimizer, num_warmup_steps=2, num_training_steps=EPOCHS * len(loader) + 6)

    @torch.no_grad()
    def evaluate():
        model.eval()
        x = eval_ids.to(device)
        loss = model(x, labels=x).loss.float().item()
        model.train()
        return loss

    log_at = []
    global_step = 0
    for epoch in range(EPOCHS):
        global_step, loss = train_one_epoch(model, loader, optimizer, scheduler, epoch, global_step, log_at)

    _emit_result(model, optimizer, loss, init_params, evaluate, log_at, scheduler=scheduler, counter=global_step)


if __name__ == "__main__":
    main()
