"""BertForSequenceClassification from a BertConfig that ALREADY uses bf16 autocast (fp32 weights).

The loop lives in train_one_epoch(), called once per epoch; a mutable state dict carries the
global step across epochs. Linear warmup/decay from transformers, sized from len(loader).
Dict batches from a map-style Dataset, a half-size final batch per epoch.
"""
import json
import math
import os
import time

import torch
from torch.optim.optimizer import register_optimizer_step_post_hook
from torch.utils.data import DataLoader, Dataset
from transformers import BertConfig, BertForSequenceClassification, get_linear_schedule_with_warmup
accumulation_steps = 4  # effective batch size: 8 x 4 = 32 samples per optimizer step

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
BATCH_SIZE = 32
MAX_LEN = 512
EPOCHS = 3
LOG_EVERY = 4
device = torch.device("cuda")


class ToyClassificationDataset(Dataset):
    def __init__(self, n, max_len, vocab_size, num_labels, seed):
        g = torch.Generator().manual_seed(seed)
        self.input_ids = torch.randint(5, vocab_size, (n, max_len), generator=g)
        self.input_ids[:, 0] = 2  # [CLS]
        self.labels = torch.randint(0, num_labels, (n,), generator=g)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return {
            "input_ids": self.input_ids[i],
            "attention_mask": torch.ones(self.input_ids.size(1), dtype=torch.long),
            "labels": self.labels[i],
        }


def train_one_epoch(model, loader, optimizer, scheduler, epoch, state):
    model.train()
    micro_step = 0
    for batch in loader:
        batch = {k: v.to(device) for k, v in batch.items()}
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            outputs = model(**batch)
        loss = outputs.loss
        (loss / accumulation_steps).backward()
        micro_step += 1
        if micro_step % accumulation_steps == 0:
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            state["step"] += 1
            if state["step"] % LOG_EVERY == 0:
                print(f"epoch {epoch} step {state['step']} loss {loss.item():.4f}")
                state["log_at"].append(_N_UPDATES)
    if micro_step % accumulation_steps != 0:
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.grad.mul_(accumulation_steps / (micro_step % accumulation_steps))
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
        state["step"] += 1
        if state["step"] % LOG_EVERY == 0:
            print(f"epoch {epoch} step {state['step']} loss {loss.item():.4f}")
            state["log_at"].append(_N_UPDATES)
    return loss


def main():
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=16000,
        hidden_size=768,
        num_hidden_layers=10,
        num_attention_heads=12,
        intermediate_size=3072,
        max_position_embeddings=MAX_LEN,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        num_labels=4,
    )
    model = BertForSequenceClassification(config).to(device)
    init_params = _snapshot(model)

    train_ds = ToyClassificationDataset(5 * BATCH_SIZE + BATCH_SIZE // 2, MAX_LEN, config.vocab_size, 4, seed=8)
    val_ds = ToyClassificationDataset(16, MAX_LEN, config.vocab_size, 4, seed=9)
    train_loader = DataLoader(train_ds, batch_size=BATCH_SIZE // 4, shuffle=False)

    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5, weight_decay=0.01)
    scheduler = get_linear_schedule_with_warmup(optimizer, num_warmup_steps=2, num_training_steps=EPOCHS * -(-len(train_loader) // accumulation_steps))

    @torch.no_grad()
    def evaluate():
        model.eval()
        batch = {k: v.to(device) for k, v in next(iter(DataLoader(val_ds, batch_size=16))).items()}
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            loss = model(**batch).loss.float().item()
        model.train()
        return loss

    state = {"step": 0, "log_at": []}
    for epoch in range(EPOCHS):
        loss = train_one_epoch(model, train_loader, optimizer, scheduler, epoch, state)

    _emit_result(model, optimizer, loss, init_params, evaluate, state["log_at"], scheduler=scheduler, counter=state["step"])


if __name__ == "__main__":
    main()
