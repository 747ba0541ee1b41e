"""BertForMaskedLM from a BertConfig whose sizes come from a YAML file named in the script.

`cfg = yaml.safe_load(open("s19_config.yaml"))` (run from the script's folder). Exactly
mask_fraction of the positions of every sequence are masked (labels -100 elsewhere), so every
batch holds the same number of predicted tokens. Module-level `for epoch` / `for batch in loader`
with a global step, linear warmup/decay from transformers, clipping, logging every log_every steps.
"""
import json
import math
import os
import time

import torch
import yaml
from torch.optim.optimizer import register_optimizer_step_post_hook
from torch.utils.data import DataLoader, TensorDataset
from transformers import BertConfig, BertForMaskedLM, get_linear_schedule_with_warmup

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
with open("s19_config.yaml") as f:
    cfg = yaml.safe_load(f)

torch.manual_seed(0)
device = torch.device("cuda")
MASK_ID = 4

model_cfg = BertConfig(
    **cfg["model"],
    hidden_dropout_prob=0.0,
    attention_probs_dropout_prob=0.0,
)
model = BertForMaskedLM(model_cfg).to(device)
model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
if cfg["train"]["gradient_checkpointing"]:
    model.gradient_checkpointing_enable()
init_params = _snapshot(model)


def make_mlm_data(n, seed):
    g = torch.Generator().manual_seed(seed)
    seq_len = cfg["train"]["seq_len"]
    ids = torch.randint(5, model_cfg.vocab_size, (n, seq_len), generator=g)
    n_mask = int(cfg["train"]["mask_fraction"] * seq_len)
    pos = torch.rand(n, seq_len, generator=g).argsort(dim=1)[:, :n_mask]
    labels = torch.full_like(ids, -100)
    labels.scatter_(1, pos, ids.gather(1, pos))
    inputs = ids.clone()
    inputs.scatter_(1, pos, MASK_ID)
    return inputs, labels


bs = cfg["train"]["batch_size"]
train_inputs, train_labels = make_mlm_data(8 * bs + bs // 2, seed=61)
val_inputs, val_labels = make_mlm_data(8, seed=62)
loader = DataLoader(TensorDataset(train_inputs, train_labels), batch_size=bs, shuffle=False)

optimizer = torch.optim.AdamW(model.parameters(), lr=cfg["train"]["lr"], weight_decay=cfg["train"]["weight_decay"])
num_training_steps = cfg["train"]["epochs"] * len(loader)
scheduler = get_linear_schedule_with_warmup(optimizer, cfg["train"]["warmup_steps"], num_training_steps + 4)


@torch.no_grad()
def evaluate():
    model.eval()
    loss = model(input_ids=val_inputs.to(device), labels=val_labels.to(device)).loss.item()
    model.train()
    return loss


log_at = []
global_step = 0
model.train()
for epoch in range(cfg["train"]["epochs"]):
    for input_ids, labels in loader:
        input_ids, labels = input_ids.to(device), labels.to(device)
        out = model(input_ids=input_ids, labels=labels)
        loss = out.loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
        global_step += 1
        if global_step % cfg["train"]["log_every"] == 0:
            print(f"epoch {epoch} step {global_step} mlm loss {loss.item():.4f}")
            log_at.append(_N_UPDATES)

_emit_result(model, optimizer, loss, init_params, evaluate, log_at, scheduler=scheduler, counter=global_step)
