"""Switch-Transformer style language model: top-1 routing with an expert capacity, GShard-style dispatch and
combine tensors (tokens x experts x capacity), load-balancing auxiliary loss. Every second block is an MoE block.

The model is built directly on the GPU (`with torch.device("cuda")`). bf16 autocast, AdamW.
"""
import math
import time
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class MoEConfig:
    vocab_size: int = 32000
    d_model: int = 768
    n_layers: int = 8
    n_heads: int = 12
    n_experts: int = 16
    capacity_factor: float = 1.25
    moe_every: int = 2
    aux_loss_coef: float = 0.01
    seq_len: int = 1024
    batch_size: int = 8
    lr: float = 3e-4
    steps: int = 6

    @property
    def d_ff(self) -> int:
        return 4 * self.d_model

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads

    @property
    def tokens_per_batch(self) -> int:
        return self.batch_size * self.seq_len

    @property
    def expert_capacity(self) -> int:
        return int(math.ceil(self.capacity_factor * self.tokens_per_batch / self.n_experts))


class Attention(nn.Module):
    def __init__(self, cfg: MoEConfig):
        super().__init__()
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model, bias=False)
        self.out = nn.Linear(cfg.d_model, cfg.d_model, bias=False)
        self.n_heads, self.head_dim = cfg.n_heads, cfg.head_dim

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.n_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out(y.transpose(1, 2).reshape(B, T, C))


class DenseFFN(nn.Module):
    def __init__(self, cfg: MoEConfig):
        super().__init__()
        self.fc1 = nn.Linear(cfg.d_model, cfg.d_ff)
        self.fc2 = nn.Linear(cfg.d_ff, cfg.d_model)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x))), x.new_zeros(())


class SwitchFFN(nn.Module):
    def __init__(self, cfg: MoEConfig):
        super().__init__()
        self.n_experts = cfg.n_experts
        self.capacity = cfg.expert_capacity
        self.router = nn.Linear(cfg.d_model, cfg.n_experts, bias=False)
        self.w1 = nn.Parameter(torch.empty(cfg.n_experts, cfg.d_model, cfg.d_ff))
        self.w2 = nn.Parameter(torch.empty(cfg.n_experts, cfg.d_ff, cfg.d_model))
        nn.init.normal_(self.w1, std=0.02)
        nn.init.normal_(self.w2, std=0.02 / math.sqrt(2 * cfg.n_layers))

    def forward(self, x):
        B, T, C = x.shape
        tokens = x.reshape(B * T, C)
        # router in fp32 for stability
        with torch.autocast("cuda", enabled=False):
            router_logits = self.router(tokens.float())
            probs = router_logits.softmax(dim=-1)                          # (N, E)
        gate, expert_idx = probs.max(dim=-1)                                # top-1
        expert_mask = F.one_hot(expert_idx, self.n_experts)                 # (N, E) int64
        position_in_expert = torch.cumsum(expert_mask, dim=0) * expert_mask - 1
        keep = (position_in_expert < self.capacity) & (expert_mask > 0)
        expert_mask = expert_mask * keep
        # load-balancing loss: fraction of tokens per expert x mean router prob per expert
        density = expert_mask.float().mean(dim=0)
        density_proxy = probs.mean(dim=0)
        aux_loss = (density * density_proxy).sum() * self.n_experts

        pos = position_in_expert.clamp(min=0, max=self.capacity - 1)           # overflow is masked by keep
        dispatch = F.one_hot(pos, self.capacity).float() * keep.unsqueeze(-1).float()   # (N, E, Cap)
        combine = dispatch * gate[:, None, None]

        expert_in = torch.einsum("nec,nd->ecd", dispatch, tokens)               # (E, Cap, C)
        h = F.gelu(torch.bmm(expert_in, self.w1))                               # (E, Cap, F)
        expert_out = torch.bmm(h, self.w2)                                       # (E, Cap, C)
        out = torch.einsum("nec,ecd->nd", combine, expert_out)
        return out.reshape(B, T, C), aux_loss


class Block(nn.Module):
    def __init__(self, cfg: MoEConfig, layer_idx: int):
        super().__init__()
        self.ln1 = nn.LayerNorm(cfg.d_model)
        self.attn = Attention(cfg)
        self.ln2 = nn.LayerNorm(cfg.d_model)
        is_moe = (layer_idx % cfg.moe_every) == cfg.moe_every - 1
        self.ffn = SwitchFFN(cfg) if is_moe else DenseFFN(cfg)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        h, aux = self.ffn(self.ln2(x))
        return x + h, aux


class SwitchLM(nn.Module):
    def __init__(self, cfg: MoEConfig):
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.pos = nn.Embedding(cfg.seq_len, cfg.d_model)
        self.blocks = nn.ModuleList([Block(cfg, i) for i in range(cfg.n_layers)])
        self.ln_f = nn.LayerNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        self.head.weight = self.embed.weight
        nn.init.normal_(self.embed.weight, std=0.02)
        nn.init.normal_(self.pos.weight, std=0.02)

    def forward(self, idx, targets):
        T = idx.shape[1]
        x = self.embed(idx) + self.pos(torch.arange(T, device=idx.device))
        aux_total = 0.0
        for blk in self.blocks:
            x, aux = blk(x)
            aux_total = aux_total + aux
        logits = self.head(self.ln_f(x))
        lm_loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return lm_loss, aux_total


def main(cfg: MoEConfig = MoEConfig()):
    torch.manual_seed(0)
    with torch.device("cuda"):
        model = SwitchLM(cfg)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"{n_params / 1e6:.1f}M parameters, capacity {cfg.expert_capacity} tokens/expert, d_ff {cfg.d_ff}")

    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr, betas=(0.9, 0.95), weight_decay=0.1)
    data = torch.randint(0, cfg.vocab_size, (cfg.steps, cfg.batch_size, cfg.seq_len + 1))

    model.train()
    t0 = time.time()
    for step in range(cfg.steps):
        batch = data[step].cuda(non_blocking=True)
        x, y = batch[:, :-1], batch[:, 1:]
        with torch.autocast("cuda", dtype=torch.bfloat16):
            lm_loss, aux = model(x, y.contiguous())
            loss = lm_loss + cfg.aux_loss_coef * aux
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        print(f"step {step}: lm {lm_loss.item():.3f} aux {float(aux):.3f} ({time.time() - t0:.1f}s)")
    print(f"peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
