"""Decoding helpers for our Transformer NMT model: greedy, beam search, and sampling.

All of them build per-step lists locally and concatenate them before returning.
"""
import math
from typing import List

import torch
import torch.nn as nn
import torch.nn.functional as F


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=512):
        super().__init__()
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len).unsqueeze(1).float()
        div = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div)
        pe[:, 1::2] = torch.cos(position * div)
        self.register_buffer("pe", pe.unsqueeze(0))

    def forward(self, x):
        return x + self.pe[:, : x.size(1)]


class Seq2SeqTransformer(nn.Module):
    def __init__(self, src_vocab, tgt_vocab, d_model=512, nhead=8, layers=6):
        super().__init__()
        self.src_emb = nn.Embedding(src_vocab, d_model)
        self.tgt_emb = nn.Embedding(tgt_vocab, d_model)
        self.pos = PositionalEncoding(d_model)
        self.transformer = nn.Transformer(d_model, nhead, layers, layers, batch_first=True)
        self.generator = nn.Linear(d_model, tgt_vocab)

    def encode(self, src, src_mask=None):
        return self.transformer.encoder(self.pos(self.src_emb(src)), src_key_padding_mask=src_mask)

    def decode(self, tgt, memory, memory_mask=None):
        causal = self.transformer.generate_square_subsequent_mask(tgt.size(1)).to(tgt.device)
        out = self.transformer.decoder(self.pos(self.tgt_emb(tgt)), memory, tgt_mask=causal,
                                       memory_key_padding_mask=memory_mask)
        return self.generator(out)

    def forward(self, src, tgt, src_mask=None):
        return self.decode(tgt, self.encode(src, src_mask), src_mask)


def greedy_decode(model, src, bos, eos, max_len=128):
    """Returns (token ids, per-step log-probs); used by the RL fine-tuning code, so no no_grad here."""
    memory = model.encode(src)
    ys = torch.full((src.size(0), 1), bos, dtype=torch.long, device=src.device)
    step_logps = []
    for _ in range(max_len):
        logits = model.decode(ys, memory)[:, -1]
        logp = F.log_softmax(logits, dim=-1)
        next_tok = logp.argmax(dim=-1, keepdim=True)
        step_logps.append(logp.gather(1, next_tok))
        ys = torch.cat([ys, next_tok], dim=1)
        if (next_tok == eos).all():
            break
    return ys, torch.cat(step_logps, dim=1)


@torch.no_grad()
def beam_search(model, src, bos, eos, beam=5, max_len=128, alpha=0.6):
    memory = model.encode(src)                          # (1, S, D)
    memory = memory.expand(beam, -1, -1)
    seqs = torch.full((beam, 1), bos, dtype=torch.long, device=src.device)
    scores = torch.zeros(beam, device=src.device)
    scores[1:] = float("-inf")
    finished: List[tuple] = []
    for step in range(max_len):
        logp = F.log_softmax(model.decode(seqs, memory)[:, -1], dim=-1)
        cand = (scores.unsqueeze(1) + logp).view(-1)
        top, idx = cand.topk(beam)
        beam_idx, tok_idx = idx // logp.size(1), idx % logp.size(1)
        seqs = torch.cat([seqs[beam_idx], tok_idx.unsqueeze(1)], dim=1)
        scores = top
        is_eos = tok_idx == eos
        for b in is_eos.nonzero().flatten().tolist():
            lp = ((5 + seqs.size(1)) / 6) ** alpha
            finished.append((scores[b].item() / lp, seqs[b].tolist()))
            scores[b] = float("-inf")
        if len(finished) >= beam:
            break
    if not finished:
        finished = [(scores[0].item(), seqs[0].tolist())]
    return max(finished, key=lambda t: t[0])[1]


def sample_decode(model, src, bos, eos, temperature=1.0, max_len=128):
    """Stochastic decoding for self-critical training; the sampled log-probs are returned with grad."""
    memory = model.encode(src)
    ys = torch.full((src.size(0), 1), bos, dtype=torch.long, device=src.device)
    logps = []
    for _ in range(max_len):
        logits = model.decode(ys, memory)[:, -1] / temperature
        dist = torch.distributions.Categorical(logits=logits)
        tok = dist.sample().unsqueeze(1)
        logps.append(dist.log_prob(tok.squeeze(1)).unsqueeze(1))
        ys = torch.cat([ys, tok], dim=1)
        if (tok == eos).all():
            break
    return ys, torch.cat(logps, dim=1)


def self_critical_step(model, optimizer, src, ref_reward_fn, bos, eos):
    model.train()
    with torch.no_grad():
        baseline_ids, _ = greedy_decode(model, src, bos, eos)
    sample_ids, sample_logps = sample_decode(model, src, bos, eos)
    advantage = ref_reward_fn(sample_ids) - ref_reward_fn(baseline_ids)
    loss = -(advantage.unsqueeze(1) * sample_logps).sum(1).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()
