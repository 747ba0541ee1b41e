"""GPT-2 built from a GPT2Config (no download), fp32, trained with `while step < max_steps`.

The outer `while global_step < args.max_steps` re-iterates the DataLoader; the inner
`for` breaks out once max_steps is reached. Linear warmup/decay from
transformers.get_linear_schedule_with_warmup, gradient clipping, logging every N steps.
Each pass over the data ends with a half-size batch.
"""
import argparse
import json
import math
import os
import time

import torch
from torch.optim.optimizer import register_optimizer_step_post_hook
from torch.utils.data import DataLoader, TensorDataset
from transformers import GPT2Config, GPT2LMHeadModel, get_linear_schedule_with_warmup

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


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--batch_size", type=int, default=16)
    p.add_argument("--seq_len", type=int, default=512)
    p.add_argument("--vocab_size", type=int, default=8192)
    p.add_argument("--n_layer", type=int, default=12)
    p.add_argument("--n_embd", type=int, default=768)
    p.add_argument("--n_head", type=int, default=12)
    p.add_argument("--lr", type=float, default=6e-4)
    p.add_argument("--warmup_steps", type=int, default=4)
    p.add_argument("--max_steps", type=int, default=20)
    p.add_argument("--log_every", type=int, default=5)
    p.add_argument("--max_grad_norm", type=float, default=1.0)
    return p.parse_args()


def main():
    args = parse_args()
    torch.manual_seed(0)
    device = "cuda"

    config = GPT2Config(
        vocab_size=args.vocab_size,
        n_positions=args.seq_len,
        n_embd=args.n_embd,
        n_layer=args.n_layer,
        n_head=args.n_head,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
        use_cache=False,
    )
    model = GPT2LMHeadModel(config).to(device)
    model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    init_params = _snapshot(model)

    g = torch.Generator().manual_seed(7)
    n_seqs = 7 * args.batch_size + args.batch_size // 2
    ids = torch.randint(0, args.vocab_size, (n_seqs, args.seq_len), generator=g)
    eval_ids = torch.randint(0, args.vocab_size, (4, args.seq_len), generator=g)
    loader = DataLoader(TensorDataset(ids), batch_size=args.batch_size, shuffle=False)

    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.1)
    scheduler = get_linear_schedule_with_warmup(optimizer, num_warmup_steps=args.warmup_steps, num_training_steps=args.max_steps)

    @torch.no_grad()
    def evaluate():
        model.eval()
        x = eval_ids.to(device)
        out = model(input_ids=x, labels=x)
        model.train()
        return out.loss.item()

    log_at = []
    global_step = 0
    model.train()
    while global_step < args.max_steps:
        for (input_ids,) in loader:
            input_ids = input_ids.to(device)
            outputs = model(input_ids=input_ids, labels=input_ids)
            loss = outputs.loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            global_step += 1
            if global_step % args.log_every == 0:
                print(f"step {global_step}: loss {loss.item():.4f} lr {scheduler.get_last_lr()[0]:.2e}")
                log_at.append(_N_UPDATES)
            if global_step >= args.max_steps:
                break

    _emit_result(model, optimizer, loss, init_params, evaluate, log_at, scheduler=scheduler, counter=global_step)


if __name__ == "__main__":
    main()
