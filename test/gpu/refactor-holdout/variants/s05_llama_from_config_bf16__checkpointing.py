"""Llama-style causal LM from a LlamaConfig via AutoModelForCausalLM.from_config(..., dtype=torch.bfloat16).

The weights (and therefore AdamW's states) are bf16: pure-bf16 training, no autocast.
Loop in main(): `for epoch` / `for step, batch in enumerate(loader)` with a completed_steps
counter, cosine schedule with warmup from transformers, clipping, logging by completed_steps.
"""
import json
import math
import os
import time

import torch
from torch.optim.optimizer import register_optimizer_step_post_hook
from torch.utils.data import DataLoader, TensorDataset
from transformers import AutoModelForCausalLM, LlamaConfig, get_cosine_schedule_with_warmup

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
BATCH_SIZE = 8
SEQ_LEN = 1024
VOCAB = 16000
NUM_EPOCHS = 2
LEARNING_RATE = 3e-4
WARMUP_STEPS = 2
LOGGING_STEPS = 4


def main():
    torch.manual_seed(0)
    device = torch.device("cuda")

    config = LlamaConfig(
        vocab_size=VOCAB,
        hidden_size=1024,
        intermediate_size=2816,
        num_hidden_layers=12,
        num_attention_heads=16,
        num_key_value_heads=4,
        max_position_embeddings=2048,
        tie_word_embeddings=False,
    )
    model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
    model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    model.to(device)
    init_params = _snapshot(model)

    g = torch.Generator().manual_seed(11)
    ids = torch.randint(0, VOCAB, (10 * BATCH_SIZE, SEQ_LEN), generator=g)
    eval_ids = torch.randint(0, VOCAB, (2, SEQ_LEN), generator=g)
    train_dataloader = DataLoader(TensorDataset(ids), batch_size=BATCH_SIZE, shuffle=False)

    no_decay = ["bias", "norm.weight"]
    grouped = [
        {"params": [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)], "weight_decay": 0.1},
        {"params": [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)], "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(grouped, lr=LEARNING_RATE, betas=(0.9, 0.95))
    max_train_steps = NUM_EPOCHS * len(train_dataloader)
    lr_scheduler = get_cosine_schedule_with_warmup(optimizer, num_warmup_steps=WARMUP_STEPS, num_training_steps=max_train_steps)

    @torch.no_grad()
    def evaluate():
        model.eval()
        x = eval_ids.to(device)
        loss = model(input_ids=x, labels=x).loss.float().item()
        model.train()
        return loss

    log_at = []
    completed_steps = 0
    for epoch in range(NUM_EPOCHS):
        model.train()
        for step, (input_ids,) in enumerate(train_dataloader):
            input_ids = input_ids.to(device)
            outputs = model(input_ids=input_ids, labels=input_ids)
            loss = outputs.loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            lr_scheduler.step()
            optimizer.zero_grad()
            completed_steps += 1
            if completed_steps % LOGGING_STEPS == 0:
                print(f"epoch {epoch} step {completed_steps} loss {loss.item():.4f}")
                log_at.append(_N_UPDATES)

    _emit_result(model, optimizer, loss, init_params, evaluate, log_at, scheduler=lr_scheduler, counter=completed_steps)


if __name__ == "__main__":
    main()
