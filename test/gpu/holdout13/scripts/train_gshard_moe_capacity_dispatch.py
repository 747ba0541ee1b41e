"""GShard-style MoE decoder: top-2 gating with expert capacity and einsum dispatch / combine tensors.

Defaults can be overridden from the environment (MOE_NUM_EXPERTS=32 python ...); ChainMap looks the env first.
"""
import math
import os
from collections import ChainMap

import torch
import torch.nn as nn
import torch.nn.functional as F

DEFAULTS = {
    "vocab": 32000, "d_model": 768, "n_heads": 12, "n_layers": 8, "moe_every": 2,
    "num_experts": 16, "d_ff": 3072, "capacity_factor": 1.25, "aux_weight": 0.01,
    "batch_size": 8, "seq_len": 1024, "steps": 5, "lr": 3e-4,
}
env = {k: type(v)(os.environ["MOE_" + k.upper()]) for k, v in DEFAULTS.items() if "MOE_" + k.upper() in os.environ}
C = ChainMap(env, DEFAULTS)


class Top2Gate(nn.Module):
    def __init__(self, d_model, num_experts, capacity_factor):
        super().__init__()
        self.wg = nn.Linear(d_model, num_experts, bias=False)
        self.E, self.cf = num_experts, capacity_factor

    def forward(self, x):                                   # x: (S, M)
        S = x.shape[0]
        capacity = int(math.ceil(2 * S / self.E * self.cf))
        logits = self.wg(x).float()
        gates = logits.softmax(dim=-1)                       # (S, E)
        idx1 = gates.argmax(dim=-1)
        mask1 = F.one_hot(idx1, self.E).float()
        idx2 = (gates * (1 - mask1)).argmax(dim=-1)
        mask2 = F.one_hot(idx2, self.E).float()
        # load-balancing loss
        aux = (gates.mean(0) * mask1.mean(0)).sum() * self.E
        loc1 = torch.cumsum(mask1, dim=0) - 1
        loc2 = torch.cumsum(mask2, dim=0) - 1 + mask1.sum(0, keepdim=True)
        mask1 = mask1 * (loc1 < capacity)
        mask2 = mask2 * (loc2 < capacity)
        pos1 = (loc1 * mask1).sum(-1).long()
        pos2 = (loc2 * mask2).sum(-1).long()
        g1 = (gates * mask1).sum(-1)
        g2 = (gates * mask2).sum(-1)
        denom = (g1 + g2).clamp(min=1e-9)
        g1, g2 = g1 / denom, g2 / denom
        combine = (g1[:, None, None] * mask1[:, :, None] * F.one_hot(pos1, capacity)[:, None, :]
                   + g2[:, None, None] * mask2[:, :, None] * F.one_hot(pos2, capacity)[:, None, :])  # (S, E, C)
        dispatch = combine > 0
        return combine, dispatch, aux


class MoELayer(nn.Module):
    def __init__(self, d_model, d_ff, num_experts, capacity_factor):
        super().__init__()
        self.gate = Top2Gate(d_model, num_experts, capacity_factor)
        self.w1 = nn.Parameter(torch.randn(num_experts, d_model, d_ff) * d_model ** -0.5)
        self.w2 = nn.Parameter(torch.randn(num_experts, d_ff, d_model) * d_ff ** -0.5)

    def forward(self, x):
        B, T, M = x.shape
        flat = x.reshape(B * T, M)
        combine, dispatch, aux = self.gate(flat)
        expert_in = torch.einsum("sec,sm->ecm", dispatch.to(flat.dtype), flat)
        h = F.gelu(torch.einsum("ecm,emf->ecf", expert_in, self.w1))
        expert_out = torch.einsum("ecf,efm->ecm", h, self.w2)
        out = torch.einsum("sec,ecm->sm", combine.to(expert_out.dtype), expert_out)
        return out.reshape(B, T, M), aux


class DenseFFN(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))

    def forward(self, x):
        return self.net(x), x.new_zeros(())


class Block(nn.Module):
    def __init__(self, cfg, use_moe):
        super().__init__()
        M = cfg["d_model"]
        self.n_heads = cfg["n_heads"]
        self.ln1, self.ln2 = nn.LayerNorm(M), nn.LayerNorm(M)
        self.qkv = nn.Linear(M, 3 * M)
        self.proj = nn.Linear(M, M)
        self.ffn = (MoELayer(M, cfg["d_ff"], cfg["num_experts"], cfg["capacity_factor"]) if use_moe
                    else DenseFFN(M, cfg["d_ff"]))

    def forward(self, x):
        B, T, M = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(B, T, 3, self.n_heads, M // self.n_heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(B, T, M)
        x = x + self.proj(a)
        f, aux = self.ffn(self.ln2(x))
        return x + f, aux


class MoELM(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.emb = nn.Embedding(cfg["vocab"], cfg["d_model"])
        self.pos = nn.Parameter(torch.zeros(1, cfg["seq_len"], cfg["d_model"]))
        self.blocks = nn.ModuleList([Block(cfg, use_moe=(i % cfg["moe_every"] == 1)) for i in range(cfg["n_layers"])])
        self.ln_f = nn.LayerNorm(cfg["d_model"])
        self.head = nn.Linear(cfg["d_model"], cfg["vocab"], bias=False)
        self.head.weight = self.emb.weight

    def forward(self, idx):
        x = self.emb(idx) + self.pos[:, : idx.shape[1]]
        aux_total = 0.0
        for blk in self.blocks:
            x, aux = blk(x)
            aux_total = aux_total + aux
        return self.head(self.ln_f(x)), aux_total


def main():
    cfg = dict(C)
    print(cfg)
    model = MoELM(cfg).cuda()
    print(f"params {sum(p.numel() for p in model.parameters()) / 1e6:.1f}M")
    opt = torch.optim.AdamW(model.parameters(), lr=cfg["lr"], betas=(0.9, 0.95), weight_decay=0.1)
    for step in range(cfg["steps"]):
        tok = torch.randint(0, cfg["vocab"], (cfg["batch_size"], cfg["seq_len"] + 1), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits, aux = model(tok[:, :-1])
            ce = F.cross_entropy(logits.float().view(-1, cfg["vocab"]), tok[:, 1:].reshape(-1))
        loss = ce + cfg["aux_weight"] * aux
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        print(f"step {step} ce {ce.item():.3f} aux {float(aux):.3f}")
    print("peak GiB", torch.cuda.max_memory_allocated() / 2**30)


if __name__ == "__main__":
    main()
