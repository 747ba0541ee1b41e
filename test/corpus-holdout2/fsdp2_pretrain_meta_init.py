"""Pre-training with FSDP2 (fully_shard) and meta-device initialisation.

torchrun --nnodes 1 --nproc_per_node 8 fsdp2_pretrain_meta_init.py --steps 10000
"""
import argparse
import math
import os
from dataclasses import dataclass

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
from torch.distributed.checkpoint.state_dict import StateDictOptions, set_model_state_dict


@dataclass
class ModelArgs:
    dim: int = 1024
    n_layers: int = 16
    n_heads: int = 16
    vocab_size: int = 32000
    max_seq_len: int = 2048


class Block(nn.Module):
    def __init__(self, a: ModelArgs):
        super().__init__()
        self.norm1 = nn.RMSNorm(a.dim)
        self.attn = nn.MultiheadAttention(a.dim, a.n_heads, batch_first=True, bias=False)
        self.norm2 = nn.RMSNorm(a.dim)
        self.mlp = nn.Sequential(nn.Linear(a.dim, 4 * a.dim, bias=False), nn.GELU(), nn.Linear(4 * a.dim, a.dim, bias=False))

    def forward(self, x, mask):
        h = self.norm1(x)
        x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


class Transformer(nn.Module):
    def __init__(self, a: ModelArgs):
        super().__init__()
        self.args = a
        self.tok_embeddings = nn.Embedding(a.vocab_size, a.dim)
        self.layers = nn.ModuleList([Block(a) for _ in range(a.n_layers)])
        self.norm = nn.RMSNorm(a.dim)
        self.output = nn.Linear(a.dim, a.vocab_size, bias=False)

    def init_weights(self):
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=0.02)

    def forward(self, tokens):
        T = tokens.size(1)
        mask = torch.full((T, T), float("-inf"), device=tokens.device).triu(1)
        h = self.tok_embeddings(tokens)
        for layer in self.layers:
            h = layer(h, mask)
        return self.output(self.norm(h))


def batches(path, batch_size, seq_len, device, rank, world):
    data = torch.from_numpy(np.memmap(path, dtype=np.uint16, mode="r").astype(np.int64))
    n = (len(data) - 1) // (seq_len * batch_size * world)
    for i in range(n):
        off = ((i * world + rank) * batch_size) * seq_len
        chunk = data[off: off + batch_size * seq_len + 1]
        x = chunk[:-1].view(batch_size, seq_len)
        y = chunk[1:].view(batch_size, seq_len)
        yield x.to(device, non_blocking=True), y.to(device, non_blocking=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="data/tokens.bin")
    ap.add_argument("--ckpt", default="")
    ap.add_argument("--steps", type=int, default=10000)
    ap.add_argument("--batch_size", type=int, default=8)
    ap.add_argument("--lr", type=float, default=3e-4)
    args = ap.parse_args()

    dist.init_process_group(backend="nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    rank, world = dist.get_rank(), dist.get_world_size()
    device = torch.device("cuda", local_rank)
    torch.manual_seed(0)

    margs = ModelArgs()
    with torch.device("meta"):
        model = Transformer(margs)
    mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    for block in model.layers:
        fully_shard(block, mp_policy=mp)
    fully_shard(model, mp_policy=mp)
    model.to_empty(device="cuda")  # expect: OOM111
    model.init_weights()

    if args.ckpt:
        sd = torch.load(args.ckpt, map_location="cpu", mmap=True, weights_only=True)
        set_model_state_dict(model, sd, options=StateDictOptions(full_state_dict=True, broadcast_from_rank0=True))

    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.1, fused=True)
    warmup = 500
    step = 0
    for x, y in batches(args.data, args.batch_size, margs.max_seq_len, device, rank, world):
        lr = args.lr * min(1.0, (step + 1) / warmup) * 0.5 * (1 + math.cos(math.pi * min(step, args.steps) / args.steps))
        for g in optimizer.param_groups:
            g["lr"] = lr
        logits = model(x)
        loss = F.cross_entropy(logits.float().view(-1, logits.size(-1)), y.view(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if rank == 0 and step % 10 == 0:
            print(f"step {step} loss {loss.item():.4f} lr {lr:.2e}")
        step += 1
        if step >= args.steps:
            break
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
