"""GRU encoder-decoder for translation with multi-head attention over the encoder states and scheduled
teacher forcing. The decoder is unrolled step by step in Python (GRUCell), as in the classic tutorials."""
import json
import os
import random

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

PAD, BOS = 0, 1
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "configs", "gru_seq2seq.json")) as fh:
    CFG = json.load(fh)


class Encoder(nn.Module):
    def __init__(self, vocab, emb_dim, hidden, layers, dec_hidden, dropout):
        super().__init__()
        self.embedding = nn.Embedding(vocab, emb_dim, padding_idx=PAD)
        self.rnn = nn.GRU(emb_dim, hidden, num_layers=layers, bidirectional=True, batch_first=True,
                          dropout=dropout)
        self.out_proj = nn.Linear(2 * hidden, dec_hidden)
        self.init_proj = nn.Linear(2 * hidden, dec_hidden)

    def forward(self, src):
        outputs, h_n = self.rnn(self.embedding(src))
        final = torch.cat([h_n[-2], h_n[-1]], dim=-1)           # last layer, both directions
        return self.out_proj(outputs), torch.tanh(self.init_proj(final))


class AttnDecoder(nn.Module):
    def __init__(self, vocab, emb_dim, hidden, heads, dropout):
        super().__init__()
        self.embedding = nn.Embedding(vocab, emb_dim, padding_idx=PAD)
        self.cell = nn.GRUCell(emb_dim + hidden, hidden)
        self.attn = nn.MultiheadAttention(hidden, heads, dropout=dropout, batch_first=True)
        self.pre_out = nn.Linear(2 * hidden, emb_dim)
        self.out = nn.Linear(emb_dim, vocab)
        self.dropout = nn.Dropout(dropout)

    def forward_step(self, token, hidden, context, memory, memory_pad):
        emb = self.dropout(self.embedding(token))
        hidden = self.cell(torch.cat([emb, context], dim=-1), hidden)
        ctx, _ = self.attn(hidden.unsqueeze(1), memory, memory, key_padding_mask=memory_pad, need_weights=False)
        ctx = ctx.squeeze(1)
        logits = self.out(torch.tanh(self.pre_out(torch.cat([hidden, ctx], dim=-1))))
        return logits, hidden, ctx


class Seq2Seq(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d, m = cfg["data"], cfg["model"]
        self.encoder = Encoder(d["src_vocab"], m["emb_dim"], m["enc_hidden"], m["enc_layers"], m["dec_hidden"],
                               m["dropout"])
        self.decoder = AttnDecoder(d["tgt_vocab"], m["emb_dim"], m["dec_hidden"], m["attn_heads"], m["dropout"])

    def forward(self, src, tgt, teacher_forcing):
        memory, hidden = self.encoder(src)
        memory_pad = src.eq(PAD)
        context = torch.zeros_like(hidden)
        token = torch.full((src.size(0),), BOS, dtype=torch.long, device=src.device)
        all_logits = []
        for t in range(tgt.size(1)):
            logits, hidden, context = self.decoder.forward_step(token, hidden, context, memory, memory_pad)
            all_logits.append(logits)
            use_gold = random.random() < teacher_forcing
            token = tgt[:, t] if use_gold else logits.argmax(-1)
        return torch.stack(all_logits, dim=1)


def make_data(cfg, n):
    d = cfg["data"]
    src = torch.randint(2, d["src_vocab"], (n, d["src_len"]))
    tgt = torch.randint(2, d["tgt_vocab"], (n, d["tgt_len"]))
    src_lens = torch.randint(d["src_len"] // 2, d["src_len"] + 1, (n,))
    src[torch.arange(d["src_len"])[None] >= src_lens[:, None]] = PAD
    return TensorDataset(src, tgt)


def main():
    torch.manual_seed(0)
    random.seed(0)
    tcfg = CFG["train"]
    model = Seq2Seq(CFG).cuda()
    optimizer = torch.optim.Adagrad(model.parameters(), lr=tcfg["lr"], initial_accumulator_value=0.1)
    loader = DataLoader(make_data(CFG, CFG["data"]["batch_size"] * tcfg["steps"]),
                        batch_size=CFG["data"]["batch_size"], shuffle=True)
    model.train()
    for step, (src, tgt) in enumerate(loader):
        src, tgt = src.cuda(), tgt.cuda()
        logits = model(src, tgt, tcfg["teacher_forcing"])
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), tgt.reshape(-1), ignore_index=PAD)
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), tcfg["clip"])
        optimizer.step()
        print(f"step {step} loss {loss.item():.3f}")
    print("peak %.2f GiB" % (torch.cuda.max_memory_allocated() / 2**30))


if __name__ == "__main__":
    main()
