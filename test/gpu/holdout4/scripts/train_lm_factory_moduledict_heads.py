"""Multi-task language model: an LM head tied to the token embedding and a document-topic head, kept in an
nn.ModuleDict. The architecture is picked by name from a registry via build_model(cfg); the config lives in
configs/lm_factory.json next to this file. Attention is F.scaled_dot_product_attention (causal)."""
import json
import sys
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, IterableDataset

MODEL_REGISTRY = {}


def register(name):
    def deco(cls):
        MODEL_REGISTRY[name] = cls
        return cls
    return deco


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, n_heads, dropout):
        super().__init__()
        self.n_heads = n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.out = nn.Linear(d_model, d_model, bias=False)
        self.dropout = dropout

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_heads, C // self.n_heads).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                           dropout_p=self.dropout if self.training else 0.0)
        return self.out(y.transpose(1, 2).contiguous().view(B, T, C))


class Block(nn.Module):
    def __init__(self, d_model, n_heads, dropout):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d_model)
        self.attn = CausalSelfAttention(d_model, n_heads, dropout)
        self.ln_2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(approximate="tanh"),
                                 nn.Linear(4 * d_model, d_model))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


@register("sdpa_transformer")
class SDPATransformerLM(nn.Module):
    def __init__(self, vocab_size, d_model, n_layers, n_heads, max_seq_len, dropout, num_topics):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, d_model)
        self.wpe = nn.Embedding(max_seq_len, d_model)
        self.blocks = nn.ModuleList([Block(d_model, n_heads, dropout) for _ in range(n_layers)])
        self.ln_f = nn.LayerNorm(d_model)
        self.heads = nn.ModuleDict({
            "lm": nn.Linear(d_model, vocab_size, bias=False),
            "topic": nn.Sequential(nn.Linear(d_model, d_model), nn.Tanh(), nn.Linear(d_model, num_topics)),
        })
        self.heads["lm"].weight = self.wte.weight   # weight tying

    def forward(self, idx):
        pos = torch.arange(idx.size(1), device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for blk in self.blocks:
            x = blk(x)
        x = self.ln_f(x)
        return {"lm": self.heads["lm"](x), "topic": self.heads["topic"](x.mean(dim=1))}


@register("lstm")
class LSTMLM(nn.Module):
    def __init__(self, vocab_size, d_model, n_layers, n_heads, max_seq_len, dropout, num_topics):
        super().__init__()
        self.emb = nn.Embedding(vocab_size, d_model)
        self.rnn = nn.LSTM(d_model, d_model, num_layers=2, batch_first=True, dropout=dropout)
        self.heads = nn.ModuleDict({"lm": nn.Linear(d_model, vocab_size), "topic": nn.Linear(d_model, num_topics)})

    def forward(self, idx):
        h, _ = self.rnn(self.emb(idx))
        return {"lm": self.heads["lm"](h), "topic": self.heads["topic"](h.mean(dim=1))}


def build_model(cfg):
    arch = cfg["arch"]
    if arch not in MODEL_REGISTRY:
        sys.exit(f"unknown arch {arch!r}; choose from {sorted(MODEL_REGISTRY)}")
    return MODEL_REGISTRY[arch](**cfg["model_kwargs"])


class TokenStream(IterableDataset):
    def __init__(self, vocab, seq_len, num_topics):
        self.vocab, self.seq_len, self.num_topics = vocab, seq_len, num_topics

    def __iter__(self):
        while True:
            x = torch.randint(0, self.vocab, (self.seq_len + 1,))
            yield x[:-1], x[1:], torch.randint(0, self.num_topics, ()).item()


def main():
    cfg = json.loads((Path(__file__).parent / "configs" / "lm_factory.json").read_text())
    device = "cuda"
    model = build_model(cfg).to(device)
    mk, dc, oc = cfg["model_kwargs"], cfg["data"], cfg["optim"]
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    optimizer = torch.optim.Adam([{"params": decay, "weight_decay": oc["weight_decay"]},
                                  {"params": no_decay, "weight_decay": 0.0}], lr=oc["lr"], betas=tuple(oc["betas"]))
    loader = DataLoader(TokenStream(mk["vocab_size"], dc["seq_len"], mk["num_topics"]),
                        batch_size=dc["micro_batch_size"])
    it = iter(loader)
    model.train()
    for step in range(oc["max_steps"]):
        for micro in range(oc["grad_accum_steps"]):
            x, y, topic = (t.to(device) for t in next(it))
            with torch.autocast("cuda", dtype=torch.bfloat16):
                out = model(x)
            lm_loss = F.cross_entropy(out["lm"].float().view(-1, out["lm"].size(-1)), y.view(-1))
            topic_loss = F.cross_entropy(out["topic"].float(), topic)
            loss = (lm_loss + cfg["topic_loss_weight"] * topic_loss) / oc["grad_accum_steps"]
            loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        print(f"step {step} lm {lm_loss.item():.3f} topic {topic_loss.item():.3f}")
    print("peak GiB %.2f" % (torch.cuda.max_memory_allocated() / 2**30))


if __name__ == "__main__":
    main()
