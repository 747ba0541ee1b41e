"""Small GPT pre-training on OpenWebText shards with Lightning Fabric.

- bf16 mixed precision, FSDP when >1 device, torch.compile on the block stack
- gradient accumulation with `fabric.no_backward_sync` on the micro-steps
- periodic validation + sample generation, checkpoints through `fabric.save`

    fabric run --devices 4 fabric_llm_pretrain.py --config configs/gpt-124m.yaml
"""
from __future__ import annotations

import argparse
import math
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import yaml
import lightning as L
from lightning.fabric.strategies import FSDPStrategy


# ----------------------------------------------------------------------------- config
@dataclass
class Config:
    data_dir: str = "data/openwebtext"
    out_dir: str = "out/gpt-124m"
    gpus: tuple = (0, 1, 2, 3)
    block_size: int = 1024
    vocab_size: int = 50304
    n_layer: int = 12
    n_head: int = 12
    n_embd: int = 768
    dropout: float = 0.0
    micro_batch: int = 12
    global_batch: int = 480
    max_iters: int = 60000
    lr: float = 6e-4
    min_lr: float = 6e-5
    warmup_iters: int = 2000
    weight_decay: float = 0.1
    grad_clip: float = 1.0
    eval_interval: int = 1000
    eval_iters: int = 100
    log_interval: int = 20
    z_loss: float = 1e-4
    probe_grad_noise: bool = False
    compile: bool = True


def load_config(path: str | None) -> Config:
    cfg = Config()
    if path:
        with open(path) as f:
            for k, v in yaml.safe_load(f).items():
                setattr(cfg, k, tuple(v) if isinstance(v, list) else v)
    return cfg


# ----------------------------------------------------------------------------- model
class CausalSelfAttention(nn.Module):
    def __init__(self, cfg: Config):
        super().__init__()
        self.qkv = nn.Linear(cfg.n_embd, 3 * cfg.n_embd, bias=False)
        self.proj = nn.Linear(cfg.n_embd, cfg.n_embd, bias=False)
        self.n_head = cfg.n_head
        self.dropout = cfg.dropout

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                           dropout_p=self.dropout if self.training else 0.0)
        return self.proj(y.transpose(1, 2).contiguous().view(B, T, C))


class MLP(nn.Module):
    def __init__(self, cfg: Config):
        super().__init__()
        self.fc = nn.Linear(cfg.n_embd, 4 * cfg.n_embd, bias=False)
        self.proj = nn.Linear(4 * cfg.n_embd, cfg.n_embd, bias=False)

    def forward(self, x):
        return self.proj(F.gelu(self.fc(x), approximate="tanh"))


class Block(nn.Module):
    def __init__(self, cfg: Config):
        super().__init__()
        self.ln1 = nn.LayerNorm(cfg.n_embd)
        self.attn = CausalSelfAttention(cfg)
        self.ln2 = nn.LayerNorm(cfg.n_embd)
        self.mlp = MLP(cfg)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, cfg: Config):
        super().__init__()
        self.cfg = cfg
        self.wte = nn.Embedding(cfg.vocab_size, cfg.n_embd)
        self.wpe = nn.Embedding(cfg.block_size, cfg.n_embd)
        self.blocks = nn.ModuleList([Block(cfg) for _ in range(cfg.n_layer)])
        self.ln_f = nn.LayerNorm(cfg.n_embd)
        self.head = nn.Linear(cfg.n_embd, cfg.vocab_size, bias=False)
        self.head.weight = self.wte.weight
        self.apply(self._init)

    @staticmethod
    def _init(m):
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, mean=0.0, std=0.02)

    def forward(self, idx, targets=None):
        T = idx.size(1)
        x = self.wte(idx) + self.wpe(torch.arange(T, device=idx.device))
        for blk in self.blocks:
            x = blk(x)
        logits = self.head(self.ln_f(x))
        if targets is None:
            return logits, None
        ce = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, ce


# ----------------------------------------------------------------------------- data
class ShardLoader:
    def __init__(self, path: Path, block: int, batch: int, rank: int, world: int, seed: int = 0):
        self.data = np.memmap(path, dtype=np.uint16, mode="r")
        self.block, self.batch = block, batch
        self.rng = np.random.default_rng(seed + rank)

    def next(self, device):
        ix = self.rng.integers(0, len(self.data) - self.block - 1, self.batch)
        x = torch.from_numpy(np.stack([self.data[i:i + self.block].astype(np.int64) for i in ix]))
        y = torch.from_numpy(np.stack([self.data[i + 1:i + 1 + self.block].astype(np.int64) for i in ix]))
        return x.pin_memory().to(device, non_blocking=True), y.pin_memory().to(device, non_blocking=True)


# ----------------------------------------------------------------------------- helpers
def lr_at(it: int, cfg: Config) -> float:
    if it < cfg.warmup_iters:
        return cfg.lr * (it + 1) / cfg.warmup_iters
    ratio = min(1.0, (it - cfg.warmup_iters) / max(1, cfg.max_iters - cfg.warmup_iters))
    return cfg.min_lr + 0.5 * (1 + math.cos(math.pi * ratio)) * (cfg.lr - cfg.min_lr)


def z_loss(logits):
    return torch.logsumexp(logits.float(), dim=-1).pow(2).mean()


@torch.no_grad()
def validate(fabric, model, val_data, cfg):
    model.eval()
    losses = torch.zeros(cfg.eval_iters, device=fabric.device)
    for k in range(cfg.eval_iters):
        x, y = val_data.next(fabric.device)
        _, loss = model(x, y)
        losses[k] = loss.item()
    val = fabric.all_reduce(losses.mean(), reduce_op="mean")
    model.train()
    return val.item()


@torch.inference_mode()
def sample(model, prompt_ids, device, max_new=64, temperature=0.8, top_k=200):
    model.eval()
    idx = torch.tensor([prompt_ids], device=device)
    for _ in range(max_new):
        logits, _ = model(idx[:, -model.cfg.block_size:])
        logits = logits[:, -1, :] / temperature
        v, _ = torch.topk(logits, top_k)
        logits[logits < v[:, [-1]]] = -float("inf")
        idx = torch.cat([idx, torch.multinomial(F.softmax(logits, -1), 1)], dim=1)
    model.train()
    return idx[0].tolist()


def grad_noise_probe(loss, params):
    """Norm of this micro-batch's gradient, without consuming the graph needed by backward."""
    grads = torch.autograd.grad(loss, params, retain_graph=True, allow_unused=True)
    return torch.sqrt(sum(g.pow(2).sum() for g in grads if g is not None)).item()


# ----------------------------------------------------------------------------- main
def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default=None)
    cfg = load_config(ap.parse_args().config)
    os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(str(g) for g in cfg.gpus)

    strategy = FSDPStrategy(auto_wrap_policy={Block}, state_dict_type="full") if len(cfg.gpus) > 1 else "auto"
    fabric = L.Fabric(accelerator="cuda", devices=len(cfg.gpus), strategy=strategy, precision="bf16-mixed")
    fabric.launch()
    fabric.seed_everything(1337 + fabric.global_rank)
    accum = cfg.global_batch // (cfg.micro_batch * fabric.world_size)

    with fabric.init_module():
        model = GPT(cfg)
    if cfg.compile:
        model.blocks = torch.compile(model.blocks)
    model = fabric.setup_module(model)
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": cfg.weight_decay},
                                   {"params": no_decay, "weight_decay": 0.0}], lr=cfg.lr, betas=(0.9, 0.95),
                                  fused=True)
    optimizer = fabric.setup_optimizers(optimizer)

    train_data = ShardLoader(Path(cfg.data_dir) / "train.bin", cfg.block_size, cfg.micro_batch,
                             fabric.global_rank, fabric.world_size)
    val_data = ShardLoader(Path(cfg.data_dir) / "val.bin", cfg.block_size, cfg.micro_batch,
                           fabric.global_rank, fabric.world_size, seed=99)
    out = Path(cfg.out_dir)
    if fabric.global_rank == 0:
        out.mkdir(parents=True, exist_ok=True)
        (out / "config.yaml").write_text(yaml.safe_dump(asdict(cfg)))

    history = {"iter": [], "loss": [], "val": [], "noise": []}
    best_val = float("inf")
    t0 = time.time()
    for it in range(cfg.max_iters + 1):
        for g in optimizer.param_groups:
            g["lr"] = lr_at(it, cfg)

        if it % cfg.eval_interval == 0:
            val = validate(fabric, model, val_data, cfg)
            history["val"].append((it, val))
            fabric.print(f"iter {it}: val loss {val:.4f}")
            if fabric.global_rank == 0 and it > 0:
                fabric.print(repr(sample(model, [50256], fabric.device)[:32]))
            if val < best_val:
                best_val = val
                fabric.save(out / "best.ckpt", {"model": model, "optimizer": optimizer, "iter": it})

        step_loss = 0.0
        for micro in range(accum):
            x, y = train_data.next(fabric.device)
            with fabric.no_backward_sync(model, enabled=micro < accum - 1):
                logits, ce = model(x, y)
                loss = ce + cfg.z_loss * z_loss(logits)
                loss = loss / accum
                if cfg.probe_grad_noise and micro == 0 and it % cfg.log_interval == 0:
                    history["noise"].append(grad_noise_probe(loss, [p for p in model.parameters()
                                                                    if p.requires_grad]))
                fabric.backward(loss)
            step_loss += ce.item() / accum
        fabric.clip_gradients(model, optimizer, max_norm=cfg.grad_clip)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

        if it % cfg.log_interval == 0:
            dt = time.time() - t0
            t0 = time.time()
            history["iter"].append(it)
            history["loss"].append(step_loss)
            tok_s = cfg.global_batch * cfg.block_size * cfg.log_interval / max(dt, 1e-9)
            fabric.print(f"iter {it} loss {step_loss:.4f} lr {lr_at(it, cfg):.2e} {tok_s / 1e3:.0f}k tok/s")
            fabric.log_dict({"train/loss": step_loss, "lr": lr_at(it, cfg)}, step=it)

    fabric.save(out / "last.ckpt", {"model": model, "optimizer": optimizer, "iter": cfg.max_iters})
    if fabric.global_rank == 0:
        torch.save(history, out / "history.pt")


if __name__ == "__main__":
    main()
