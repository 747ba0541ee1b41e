#!/usr/bin/env python
"""Pretrain a small Llama-style decoder from scratch.

    python train_llama_subcommands.py train --batch-size 8 --seq-len 1024
    python train_llama_subcommands.py eval --ckpt out/llama.pt

The model is built from a LlamaConfig in code (no hub download); data is a synthetic token stream.
"""
import argparse
import math
import sys
import time

import torch
from torch.utils.data import DataLoader, Dataset
from transformers import LlamaConfig, LlamaForCausalLM, get_cosine_schedule_with_warmup


class RandomTokenStream(Dataset):
    def __init__(self, n_samples, seq_len, vocab_size, seed=0):
        g = torch.Generator().manual_seed(seed)
        self.data = torch.randint(3, vocab_size, (n_samples, seq_len), generator=g)

    def __len__(self):
        return self.data.size(0)

    def __getitem__(self, i):
        ids = self.data[i]
        return {"input_ids": ids, "labels": ids.clone()}


def build_config(args):
    return LlamaConfig(
        vocab_size=args.vocab_size,
        hidden_size=args.hidden_size,
        intermediate_size=args.intermediate_size,
        num_hidden_layers=args.num_layers,
        num_attention_heads=args.num_heads,
        num_key_value_heads=args.num_kv_heads,
        max_position_embeddings=4096,
        tie_word_embeddings=False,
        use_cache=False,
    )


def cmd_train(args):
    device = torch.device("cuda")
    torch.manual_seed(args.seed)
    config = build_config(args)
    model = LlamaForCausalLM(config).to(device)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"params: {n_params / 1e6:.1f}M")

    decay, no_decay = [], []
    for name, p in model.named_parameters():
        (no_decay if p.ndim < 2 else decay).append(p)
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": args.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
        lr=args.lr, betas=(0.9, 0.95), eps=1e-8,
    )
    scheduler = get_cosine_schedule_with_warmup(optimizer, num_warmup_steps=2, num_training_steps=args.max_steps)

    ds = RandomTokenStream(args.batch_size * args.max_steps, args.seq_len, args.vocab_size)
    loader = DataLoader(ds, batch_size=args.batch_size, shuffle=True, drop_last=True, num_workers=0)

    model.train()
    step = 0
    t0 = time.time()
    while step < args.max_steps:
        for batch in loader:
            batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}
            with torch.autocast("cuda", dtype=torch.bfloat16):
                out = model(**batch)
            out.loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.grad_clip)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            step += 1
            if step % args.log_every == 0:
                print(f"step {step} loss {out.loss.item():.3f} ppl {math.exp(min(out.loss.item(), 20)):.1f} "
                      f"lr {scheduler.get_last_lr()[0]:.2e} {time.time() - t0:.1f}s")
            if step >= args.max_steps:
                break
    print(f"peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


def cmd_eval(args):
    print("eval: would load", args.ckpt, "and report perplexity")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)

    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--vocab-size", type=int, default=32000)
    common.add_argument("--hidden-size", type=int, default=1024)
    common.add_argument("--intermediate-size", type=int, default=2816)
    common.add_argument("--num-layers", type=int, default=16)
    common.add_argument("--num-heads", type=int, default=16)
    common.add_argument("--num-kv-heads", type=int, default=4)
    common.add_argument("--seed", type=int, default=1337)

    p_train = sub.add_parser("train", parents=[common], help="pretrain from scratch")
    p_train.add_argument("--batch-size", type=int, default=8)
    p_train.add_argument("--seq-len", type=int, default=1024)
    p_train.add_argument("--lr", type=float, default=3e-4)
    p_train.add_argument("--weight-decay", type=float, default=0.1)
    p_train.add_argument("--grad-clip", type=float, default=1.0)
    p_train.add_argument("--max-steps", type=int, default=4)
    p_train.add_argument("--log-every", type=int, default=1)
    p_train.set_defaults(func=cmd_train)

    p_eval = sub.add_parser("eval", parents=[common], help="evaluate a checkpoint")
    p_eval.add_argument("--ckpt", default="out/llama.pt")
    p_eval.add_argument("--batch-size", type=int, default=16)
    p_eval.set_defaults(func=cmd_eval)

    argv = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(argv or ["train"])
    args.func(args)


if __name__ == "__main__":
    main()
