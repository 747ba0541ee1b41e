"""Transformer-base translation model trained with teacher forcing; the configuration lives in
configs/seq2seq_base.json next to this file.

The JSON is loaded into dataclasses whose derived sizes are properties (d_ff, head_dim). Layers are built through
factories: functools.partial(nn.LayerNorm, eps=...) and getattr(nn, cfg.activation).
"""
import argparse
import json
import math
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

HERE = Path(__file__).resolve().parent


@dataclass
class ModelConfig:
    vocab_size: int
    d_model: int
    n_heads: int
    n_encoder_layers: int
    n_decoder_layers: int
    ffn_mult: int = 4
    activation: str = "ReLU"
    dropout: float = 0.1
    max_len: int = 512
    norm_eps: float = 1e-5
    tie_embeddings: bool = True

    @property
    def d_ff(self):
        return self.ffn_mult * self.d_model

    @property
    def head_dim(self):
        return self.d_model // self.n_heads


@dataclass
class DataConfig:
    src_len: int
    tgt_len: int
    pad_id: int = 0
    bos_id: int = 1
    eos_id: int = 2


@dataclass
class TrainConfig:
    batch_size: int = 32
    steps: int = 10
    lr: float = 5e-4
    warmup: int = 4000
    label_smoothing: float = 0.0
    clip: float = 0.0


def load_config(path):
    with open(path) as f:
        raw = json.load(f)
    return ModelConfig(**raw["model"]), DataConfig(**raw["data"]), TrainConfig(**raw["train"])


class SinusoidalPositions(nn.Module):
    def __init__(self, d_model, max_len):
        super().__init__()
        pos = torch.arange(max_len).unsqueeze(1)
        div = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, d_model)
        pe[:, 0::2] = torch.sin(pos * div)
        pe[:, 1::2] = torch.cos(pos * div)
        self.register_buffer("pe", pe, persistent=False)

    def forward(self, x):
        return x + self.pe[: x.size(1)]


class MultiHeadAttention(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.h, self.dk = cfg.n_heads, cfg.head_dim
        self.q = nn.Linear(cfg.d_model, cfg.d_model)
        self.kv = nn.Linear(cfg.d_model, 2 * cfg.d_model)
        self.o = nn.Linear(cfg.d_model, cfg.d_model)
        self.p = cfg.dropout

    def forward(self, x, memory, mask=None, causal=False):
        B, T, _ = x.shape
        S = memory.shape[1]
        q = self.q(x).view(B, T, self.h, self.dk).transpose(1, 2)
        k, v = self.kv(memory).view(B, S, 2, self.h, self.dk).permute(2, 0, 3, 1, 4)
        if causal:
            causal_mask = torch.ones(T, S, dtype=torch.bool, device=x.device).tril()
            mask = causal_mask if mask is None else (mask & causal_mask)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask,
                                             dropout_p=self.p if self.training else 0.0)
        return self.o(out.transpose(1, 2).reshape(B, T, -1))


class FeedForward(nn.Sequential):
    def __init__(self, cfg: ModelConfig, act_layer):
        super().__init__(nn.Linear(cfg.d_model, cfg.d_ff), act_layer(), nn.Dropout(cfg.dropout),
                         nn.Linear(cfg.d_ff, cfg.d_model))


class EncoderLayer(nn.Module):
    def __init__(self, cfg, norm_layer, act_layer):
        super().__init__()
        self.norm1, self.norm2 = norm_layer(cfg.d_model), norm_layer(cfg.d_model)
        self.attn = MultiHeadAttention(cfg)
        self.ffn = FeedForward(cfg, act_layer)
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x, src_mask):
        h = self.norm1(x)
        x = x + self.drop(self.attn(h, h, mask=src_mask))
        return x + self.drop(self.ffn(self.norm2(x)))


class DecoderLayer(nn.Module):
    def __init__(self, cfg, norm_layer, act_layer):
        super().__init__()
        self.norm1, self.norm2, self.norm3 = (norm_layer(cfg.d_model) for _ in range(3))
        self.self_attn = MultiHeadAttention(cfg)
        self.cross_attn = MultiHeadAttention(cfg)
        self.ffn = FeedForward(cfg, act_layer)
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, y, memory, tgt_mask, src_mask):
        h = self.norm1(y)
        y = y + self.drop(self.self_attn(h, h, mask=tgt_mask, causal=True))
        y = y + self.drop(self.cross_attn(self.norm2(y), memory, mask=src_mask))
        return y + self.drop(self.ffn(self.norm3(y)))


class Seq2SeqTransformer(nn.Module):
    def __init__(self, cfg: ModelConfig, pad_id: int):
        super().__init__()
        self.cfg, self.pad_id = cfg, pad_id
        norm_layer = partial(nn.LayerNorm, eps=cfg.norm_eps)
        act_layer = getattr(nn, cfg.activation)
        self.embed = nn.Embedding(cfg.vocab_size, cfg.d_model, padding_idx=pad_id)
        self.pos = SinusoidalPositions(cfg.d_model, cfg.max_len)
        self.emb_drop = nn.Dropout(cfg.dropout)
        self.encoder = nn.ModuleList([EncoderLayer(cfg, norm_layer, act_layer)
                                      for _ in range(cfg.n_encoder_layers)])
        self.decoder = nn.ModuleList([DecoderLayer(cfg, norm_layer, act_layer)
                                      for _ in range(cfg.n_decoder_layers)])
        self.enc_norm, self.dec_norm = norm_layer(cfg.d_model), norm_layer(cfg.d_model)
        self.generator = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        if cfg.tie_embeddings:
            self.generator.weight = self.embed.weight
        nn.init.normal_(self.embed.weight, mean=0.0, std=cfg.d_model ** -0.5)

    def embed_tokens(self, ids):
        return self.emb_drop(self.pos(self.embed(ids) * math.sqrt(self.cfg.d_model)))

    def forward(self, src, dec_in):
        src_mask = (src != self.pad_id)[:, None, None, :]          # (B, 1, 1, S)
        tgt_mask = (dec_in != self.pad_id)[:, None, None, :]
        x = self.embed_tokens(src)
        for layer in self.encoder:
            x = layer(x, src_mask)
        memory = self.enc_norm(x)
        y = self.embed_tokens(dec_in)
        for layer in self.decoder:
            y = layer(y, memory, tgt_mask, src_mask)
        return self.generator(self.dec_norm(y))


class ParallelCorpus(Dataset):
    def __init__(self, n, dcfg: DataConfig, vocab_size):
        self.d, self.vocab_size, self.n = dcfg, vocab_size, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        s_len = int(torch.randint(self.d.src_len // 2, self.d.src_len + 1, ()))
        t_len = int(torch.randint(self.d.tgt_len // 2, self.d.tgt_len + 1, ()))
        if i == 0:
            s_len, t_len = self.d.src_len, self.d.tgt_len
        src = torch.full((self.d.src_len,), self.d.pad_id)
        tgt = torch.full((self.d.tgt_len,), self.d.pad_id)
        src[:s_len] = torch.randint(3, self.vocab_size, (s_len,))
        tgt[:t_len] = torch.randint(3, self.vocab_size, (t_len,))
        tgt[t_len - 1] = self.d.eos_id
        return src, tgt


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", default=str(HERE / "configs" / "seq2seq_base.json"))
    args = parser.parse_args()
    mcfg, dcfg, tcfg = load_config(args.config)
    print(mcfg, f"d_ff={mcfg.d_ff} head_dim={mcfg.head_dim}", dcfg, tcfg, sep="\n")

    device = torch.device("cuda")
    model = Seq2SeqTransformer(mcfg, dcfg.pad_id).to(device)
    print(f"{sum(p.numel() for p in model.parameters()) / 1e6:.1f}M parameters")

    optimizer = torch.optim.Adam(model.parameters(), lr=tcfg.lr, betas=(0.9, 0.98), eps=1e-9)
    noam = lambda step: min((step + 1) ** -0.5, (step + 1) * tcfg.warmup ** -1.5) * tcfg.warmup ** 0.5
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, noam)
    criterion = nn.CrossEntropyLoss(ignore_index=-100, label_smoothing=tcfg.label_smoothing)

    loader = DataLoader(ParallelCorpus(tcfg.batch_size * tcfg.steps, dcfg, mcfg.vocab_size),
                        batch_size=tcfg.batch_size, shuffle=False, num_workers=2)
    model.train()
    t0 = time.time()
    for step, (src, tgt) in enumerate(loader):
        src, tgt = src.to(device), tgt.to(device)
        # teacher forcing: the decoder sees BOS + gold prefix, predicts the next gold token
        bos = torch.full_like(tgt[:, :1], dcfg.bos_id)
        dec_in = torch.cat([bos, tgt[:, :-1]], dim=1)
        labels = tgt.masked_fill(tgt == dcfg.pad_id, -100)
        logits = model(src, dec_in)
        loss = criterion(logits.reshape(-1, logits.size(-1)), labels.reshape(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if tcfg.clip:
            nn.utils.clip_grad_norm_(model.parameters(), tcfg.clip)
        optimizer.step()
        scheduler.step()
        print(f"step {step} loss {loss.item():.3f} lr {scheduler.get_last_lr()[0]:.2e} ({time.time() - t0:.1f}s)")
    print(f"peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
