"""Transformer-XL style language model: segment-level recurrence with a cache of the previous segment's
hidden states (detached) and learned relative-position biases, attention through
F.scaled_dot_product_attention. Hyper-parameters come from configs/txl_base.json next to this file."""
import json
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

CONFIG = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                             "configs", "txl_base.json")


class RelPosBias(nn.Module):
    """One learned scalar per (head, clipped distance)."""

    def __init__(self, n_head, max_dist):
        super().__init__()
        self.max_dist = max_dist
        self.table = nn.Embedding(max_dist + 1, n_head)

    def forward(self, qlen, klen, device):
        # query i sits at absolute position (klen - qlen + i); key j at position j
        q_pos = torch.arange(klen - qlen, klen, device=device)[:, None]
        k_pos = torch.arange(klen, device=device)[None, :]
        dist = (q_pos - k_pos).clamp(0, self.max_dist)
        return self.table(dist).permute(2, 0, 1)          # (H, qlen, klen)


class RelMultiHeadAttn(nn.Module):
    def __init__(self, d_model, n_head, d_head, dropatt):
        super().__init__()
        self.n_head, self.d_head = n_head, d_head
        self.q = nn.Linear(d_model, n_head * d_head, bias=False)
        self.kv = nn.Linear(d_model, 2 * n_head * d_head, bias=False)
        self.o = nn.Linear(n_head * d_head, d_model, bias=False)
        self.dropatt = dropatt

    def forward(self, h, mem, bias, causal_mask):
        B, qlen, _ = h.shape
        cat = torch.cat([mem, h], dim=1) if mem is not None else h
        klen = cat.size(1)
        q = self.q(h).view(B, qlen, self.n_head, self.d_head).transpose(1, 2)
        k, v = self.kv(cat).view(B, klen, 2, self.n_head, self.d_head).permute(2, 0, 3, 1, 4)
        attn_bias = bias.masked_fill(causal_mask, float("-inf")).to(q.dtype).unsqueeze(0)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_bias,
                                             dropout_p=self.dropatt if self.training else 0.0)
        return self.o(out.transpose(1, 2).reshape(B, qlen, -1))


class DecoderLayer(nn.Module):
    def __init__(self, d_model, n_head, d_head, d_inner, dropout, dropatt):
        super().__init__()
        self.attn = RelMultiHeadAttn(d_model, n_head, d_head, dropatt)
        self.ln1 = nn.LayerNorm(d_model)
        self.ff = nn.Sequential(nn.Linear(d_model, d_inner), nn.ReLU(inplace=True), nn.Dropout(dropout),
                                nn.Linear(d_inner, d_model), nn.Dropout(dropout))
        self.ln2 = nn.LayerNorm(d_model)
        self.drop = nn.Dropout(dropout)

    def forward(self, h, mem, bias, mask):
        h = self.ln1(h + self.drop(self.attn(h, mem, bias, mask)))
        return self.ln2(h + self.ff(h))


class MemTransformerLM(nn.Module):
    def __init__(self, n_token, n_layer, d_model, n_head, d_head, d_inner, dropout, dropatt, tie_weight, mem_len,
                 tgt_len):
        super().__init__()
        self.mem_len = mem_len
        self.word_emb = nn.Embedding(n_token, d_model)
        self.drop = nn.Dropout(dropout)
        self.layers = nn.ModuleList([DecoderLayer(d_model, n_head, d_head, d_inner, dropout, dropatt)
                                     for _ in range(n_layer)])
        self.rel_bias = RelPosBias(n_head, max_dist=mem_len + tgt_len)
        self.out = nn.Linear(d_model, n_token)
        nn.init.normal_(self.word_emb.weight, std=0.02)
        if tie_weight:
            self.out.weight = self.word_emb.weight

    def init_mems(self):
        return [None] * len(self.layers)

    def forward(self, tokens, mems):
        qlen = tokens.size(1)
        mlen = mems[0].size(1) if mems[0] is not None else 0
        klen = mlen + qlen
        bias = self.rel_bias(qlen, klen, tokens.device)
        mask = torch.ones(qlen, klen, dtype=torch.bool, device=tokens.device).triu(diagonal=1 + mlen)
        h = self.drop(self.word_emb(tokens))
        new_mems = []
        for layer, mem in zip(self.layers, mems):
            new_mems.append(h)
            h = layer(h, mem, bias, mask)
        # keep the last mem_len states of every layer's input, without their history
        with torch.no_grad():
            new_mems = [torch.cat([m, n], 1)[:, -self.mem_len:].detach() if m is not None else n.detach()
                        for m, n in zip(mems, new_mems)]
        return self.out(self.drop(h)), new_mems


def main():
    with open(CONFIG) as fh:
        cfg = json.load(fh)
    mc, tc = cfg["model"], cfg["train"]
    device = torch.device("cuda")
    model = MemTransformerLM(**mc, mem_len=tc["mem_len"], tgt_len=tc["tgt_len"]).to(device)
    print("params", sum(p.numel() for p in model.parameters()))
    opt = torch.optim.AdamW(model.parameters(), lr=tc["lr"], weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.1, total_iters=tc["warmup_steps"])

    B, L = tc["batch_size"], tc["tgt_len"]
    stream = torch.randint(0, mc["n_token"], (B, L * tc["n_segments"] + 1), device=device)
    mems = model.init_mems()
    model.train()
    for seg in range(tc["n_segments"]):
        inp = stream[:, seg * L:(seg + 1) * L]
        tgt = stream[:, seg * L + 1:(seg + 1) * L + 1]
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits, mems = model(inp, mems)
            loss = F.cross_entropy(logits.float().view(-1, logits.size(-1)), tgt.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), tc["clip"])
        opt.step()
        sched.step()
        print(f"segment {seg}: loss {loss.item():.3f}, mem len {mems[0].size(1)}")
    print(f"max allocated {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
