"""LlamaForCausalLM(config) in fp32, written like transformers' *_no_trainer examples.

HF-style argparse names (--per_device_train_batch_size), a map-style Dataset that returns
dicts, transformers.get_scheduler("cosine", ...) sized from len(train_dataloader),
a completed_steps counter, clipping, logging every --logging_steps. The last batch of each
epoch holds a quarter of a batch.
"""
import argparse
import json
import math
import os
import time

import torch
from torch.optim.optimizer import register_optimizer_step_post_hook
from torch.utils.data import DataLoader, Dataset
from transformers import LlamaConfig, LlamaForCausalLM, get_scheduler

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


class PackedTokens(Dataset):
    def __init__(self, n_examples, block_size, vocab_size, seed):
        g = torch.Generator().manual_seed(seed)
        self.data = torch.randint(0, vocab_size, (n_examples, block_size), generator=g)

    def __len__(self):
        return self.data.size(0)

    def __getitem__(self, idx):
        ids = self.data[idx]
        return {"input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": ids.clone()}


def parse_args():
    parser = argparse.ArgumentParser(description="Train a causal LM from scratch")
    parser.add_argument("--per_device_train_batch_size", type=int, default=16)
    parser.add_argument("--block_size", type=int, default=512)
    parser.add_argument("--learning_rate", type=float, default=5e-4)
    parser.add_argument("--weight_decay", type=float, default=0.01)
    parser.add_argument("--num_train_epochs", type=int, default=3)
    parser.add_argument("--lr_scheduler_type", type=str, default="cosine")
    parser.add_argument("--num_warmup_steps", type=int, default=3)
    parser.add_argument("--logging_steps", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args()


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    device = torch.device("cuda")

    config = LlamaConfig(
        vocab_size=8000,
        hidden_size=768,
        intermediate_size=2048,
        num_hidden_layers=8,
        num_attention_heads=12,
        num_key_value_heads=12,
        max_position_embeddings=args.block_size,
    )
    model = LlamaForCausalLM(config)
    model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    model.to(device)
    init_params = _snapshot(model)

    bs = args.per_device_train_batch_size
    train_dataset = PackedTokens(6 * bs + bs // 4, args.block_size, config.vocab_size, seed=3)
    eval_batch = PackedTokens(4, args.block_size, config.vocab_size, seed=4)[slice(0, 4)]
    train_dataloader = DataLoader(train_dataset, shuffle=False, batch_size=bs)

    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate, weight_decay=args.weight_decay)
    max_train_steps = args.num_train_epochs * len(train_dataloader)
    lr_scheduler = get_scheduler(
        name=args.lr_scheduler_type,
        optimizer=optimizer,
        num_warmup_steps=args.num_warmup_steps,
        num_training_steps=max_train_steps + 5,
    )

    @torch.no_grad()
    def evaluate():
        model.eval()
        batch = {k: v.to(device) for k, v in eval_batch.items()}
        loss = model(**batch).loss.item()
        model.train()
        return loss

    log_at = []
    completed_steps = 0
    for epoch in range(args.num_train_epochs):
        model.train()
        for step, batch in enumerate(train_dataloader):
            batch = {k: v.to(device) for k, v in batch.items()}
            outputs = model(**batch)
            loss = outputs.loss
            loss.backward()
            optimizer.step()
            lr_scheduler.step()
            optimizer.zero_grad()
            completed_steps += 1

            if completed_steps % args.logging_steps == 0:
                print(f"epoch {epoch} step {completed_steps}: loss {loss.item():.4f} lr {lr_scheduler.get_last_lr()[0]:.2e}")
                log_at.append(_N_UPDATES)

    _emit_result(model, optimizer, loss, init_params, evaluate, log_at, scheduler=lr_scheduler, counter=completed_steps)


if __name__ == "__main__":
    main()
