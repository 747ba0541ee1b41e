"""Small mixture-of-experts language model: every second block swaps its FFN for 8 top-2 routed experts.

MoEBlock subclasses Block and only overrides build_ffn(); the config derives its sizes in __post_init__.
"""
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


@dataclass
class MoEConfig:
    vocab_size: int = 32000
    seq_len: int = 512
    d_model: int = 768
    n_heads: int = 12
    n_layers: int = 8
    ffn_mult: int = 4
    n_experts: int = 8
    top_k: int = 2
    moe_every: int = 2
    aux_loss_coef: float = 0.01

    def __post_init__(self):
        self.d_ff = self.ffn_mult * self.d_model
        self.head_dim = self.d_model // self.n_heads


@dataclass
class TrainArgs:
    batch_size: int = 16
    lr: float = 3e-4
    steps: int = 6
    grad_clip: float = 1.0


class FFN(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.w1 = nn.Linear(d_model, d_ff, bias=False)
        self.w2 = nn.Linear(d_ff, d_model, bias=False)

    def forward(self, x):
        return self.w2(F.gelu(self.w1(x)))


class TopKMoE(nn.Module):
    def __init__(self, d_model, d_ff, n_experts, top_k):
        super().__init__()
        self.router = nn.Linear(d_model, n_experts, bias=False)
        self.experts = nn.ModuleList([FFN(d_model, d_ff) for _ in range(n_experts)])
        self.top_k = top_k
        self.aux_loss = None

    def forward(self, x):
        b, t, d = x.shape
        flat = x.reshape(-1, d)
        probs = self.router(flat).float().softmax(-1)
        weights, idx = probs.topk(self.top_k, dim=-1)
        weights = weights / weights.sum(-1, keepdim=True)
        out = torch.zeros_like(flat)
        for e, expert in enumerate(self.experts):
            token_idx, slot = (idx == e).nonzero(as_tuple=True)
            if token_idx.numel() == 0:
                continue
            y = expert(flat[token_idx]) * weights[token_idx, slot].unsqueeze(-1).to(flat.dtype)
            out = out.index_add(0, token_idx, y)
        # load-balancing loss (Switch style)
        frac = F.one_hot(idx[:, 0], len(self.experts)).float().mean(0)
        self.aux_loss = len(self.experts) * (frac * probs.mean(0)).sum()
        return out.view(b, t, d)


class Block(nn.Module):
    def __init__(self, d_model, n_heads, d_ff):
        super().__init__()
        self.n_heads = n_heads
        self.ln1 = nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.out = nn.Linear(d_model, d_model, bias=False)
        self.ln2 = nn.LayerNorm(d_model)
        self.ffn = self.build_ffn(d_model, d_ff)

    def build_ffn(self, d_model, d_ff):
        return FFN(d_model, d_ff)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, self.n_heads, -1).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, t, d)
        x = x + self.out(a)
        return x + self.ffn(self.ln2(x))


class MoEBlock(Block):
    def __init__(self, d_model, n_heads, d_ff, n_experts=8, top_k=2):
        self.n_experts, self.top_k = n_experts, top_k   # set first: Block.__init__ calls build_ffn()
        super().__init__(d_model, n_heads, d_ff=d_ff)

    def build_ffn(self, d_model, d_ff):
        return TopKMoE(d_model, d_ff, self.n_experts, self.top_k)


class MoELM(nn.Module):
    def __init__(self, cfg: MoEConfig):
        super().__init__()
        self.embed = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.pos = nn.Parameter(torch.zeros(1, cfg.seq_len, cfg.d_model))
        blocks = []
        for i in range(cfg.n_layers):
            if (i + 1) % cfg.moe_every == 0:
                blocks.append(MoEBlock(cfg.d_model, cfg.n_heads, cfg.d_ff, cfg.n_experts, cfg.top_k))
            else:
                blocks.append(Block(cfg.d_model, cfg.n_heads, cfg.d_ff))
        self.blocks = nn.ModuleList(blocks)
        self.norm = nn.LayerNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, ids):
        x = self.embed(ids) + self.pos[:, : ids.size(1)]
        for blk in self.blocks:
            x = blk(x)
        logits = self.head(self.norm(x))
        aux = sum(b.ffn.aux_loss for b in self.blocks if isinstance(b, MoEBlock))
        return logits, aux


class RandomText(Dataset):
    def __init__(self, n, seq_len, vocab):
        self.data = torch.randint(0, vocab, (n, seq_len + 1))

    def __len__(self):
        return len(self.data)

    def __getitem__(self, i):
        return self.data[i, :-1], self.data[i, 1:]


def main():
    cfg, targs = MoEConfig(), TrainArgs()
    model = MoELM(cfg).cuda()
    n_params = sum(p.numel() for p in model.parameters())
    print(f"{n_params / 1e6:.1f}M params (d_ff={cfg.d_ff})")
    opt = torch.optim.AdamW(model.parameters(), lr=targs.lr, weight_decay=0.1, fused=True)
    loader = DataLoader(RandomText(targs.batch_size * targs.steps, cfg.seq_len, cfg.vocab_size),
                        batch_size=targs.batch_size, shuffle=True)
    model.train()
    for step, (x, y) in enumerate(loader):
        x, y = x.cuda(), y.cuda()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits, aux = model(x)
            loss = F.cross_entropy(logits.float().view(-1, cfg.vocab_size), y.view(-1))
            total = loss + cfg.aux_loss_coef * aux
        total.backward()
        nn.utils.clip_grad_norm_(model.parameters(), targs.grad_clip)
        opt.step()
        opt.zero_grad(set_to_none=True)
        print(f"step {step}: lm {loss.item():.3f} aux {aux.item():.3f}")
    print(f"peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
