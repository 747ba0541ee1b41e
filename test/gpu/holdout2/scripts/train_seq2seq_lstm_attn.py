"""Attention-based NMT (Luong-style input feeding), the old-school way."""
import random
import time
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence
from torch.utils.data import DataLoader, Dataset

cfg = SimpleNamespace(
    src_vocab=16000,
    tgt_vocab=16000,
    emb_dim=512,
    hidden=1024,
    enc_layers=2,
    dec_layers=2,
    dropout=0.2,
    batch_size=256,
    max_src_len=100,
    max_tgt_len=60,
    lr=1e-3,
    steps=5,
    clip=1.0,
    pad=0,
    bos=1,
    eos=2,
)


class ParallelCorpus(Dataset):
    def __init__(self, n, seed=0):
        rnd = random.Random(seed)
        self.pairs = []
        for _ in range(n):
            ls = rnd.randint(cfg.max_src_len // 2, cfg.max_src_len)
            lt = rnd.randint(cfg.max_tgt_len // 2, cfg.max_tgt_len - 2)
            src = torch.randint(3, cfg.src_vocab, (ls,))
            tgt = torch.cat([torch.tensor([cfg.bos]), torch.randint(3, cfg.tgt_vocab, (lt,)), torch.tensor([cfg.eos])])
            self.pairs.append((src, tgt))

    def __len__(self):
        return len(self.pairs)

    def __getitem__(self, i):
        return self.pairs[i]


def collate(batch):
    srcs, tgts = zip(*batch)
    src_lens = torch.tensor([len(s) for s in srcs])
    src = pad_sequence(srcs, batch_first=True, padding_value=cfg.pad)
    tgt = pad_sequence(tgts, batch_first=True, padding_value=cfg.pad)
    return src, src_lens, tgt


class Encoder(nn.Module):
    def __init__(self, vocab, emb, hidden, layers, dropout):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb, padding_idx=cfg.pad)
        self.rnn = nn.LSTM(emb, hidden, num_layers=layers, bidirectional=True, batch_first=True,
                           dropout=dropout)
        self.bridge_h = nn.Linear(2 * hidden, hidden)
        self.bridge_c = nn.Linear(2 * hidden, hidden)
        self.drop = nn.Dropout(dropout)

    def forward(self, src, lens):
        x = self.drop(self.embed(src))
        packed = pack_padded_sequence(x, lens.cpu(), batch_first=True, enforce_sorted=False)
        out, (h, c) = self.rnn(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=src.size(1))
        # h: (layers*2, B, H) -> (layers, B, 2H)
        L = h.size(0) // 2
        h = torch.cat([h[0::2], h[1::2]], dim=-1)
        c = torch.cat([c[0::2], c[1::2]], dim=-1)
        return out, (torch.tanh(self.bridge_h(h)), torch.tanh(self.bridge_c(c)))


class GeneralAttention(nn.Module):
    def __init__(self, dec_dim, enc_dim):
        super().__init__()
        self.W = nn.Linear(dec_dim, enc_dim, bias=False)
        self.out = nn.Linear(dec_dim + enc_dim, dec_dim, bias=False)

    def forward(self, query, memory, mask):
        scores = torch.bmm(memory, self.W(query).unsqueeze(2)).squeeze(2)   # (B, S)
        scores = scores.masked_fill(~mask, float("-inf"))
        attn = F.softmax(scores, dim=-1)
        ctx = torch.bmm(attn.unsqueeze(1), memory).squeeze(1)
        return torch.tanh(self.out(torch.cat([query, ctx], dim=-1))), attn


class Decoder(nn.Module):
    def __init__(self, vocab, emb, hidden, enc_dim, layers, dropout):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb, padding_idx=cfg.pad)
        self.rnn = nn.LSTM(emb + hidden, hidden, num_layers=layers, batch_first=True, dropout=dropout)
        self.attn = GeneralAttention(hidden, enc_dim)
        self.drop = nn.Dropout(dropout)
        self.proj = nn.Linear(hidden, vocab)

    def forward(self, tgt_in, memory, mask, state):
        B, T = tgt_in.shape
        feed = memory.new_zeros(B, self.rnn.hidden_size)
        emb = self.drop(self.embed(tgt_in))
        outs = []
        for t in range(T):
            x = torch.cat([emb[:, t], feed], dim=-1).unsqueeze(1)
            y, state = self.rnn(x, state)
            feed, _ = self.attn(y.squeeze(1), memory, mask)
            outs.append(self.drop(feed))
        return self.proj(torch.stack(outs, dim=1))


class Seq2Seq(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder(cfg.src_vocab, cfg.emb_dim, cfg.hidden, cfg.enc_layers, cfg.dropout)
        self.decoder = Decoder(cfg.tgt_vocab, cfg.emb_dim, cfg.hidden, 2 * cfg.hidden, cfg.dec_layers,
                               cfg.dropout)

    def forward(self, src, lens, tgt_in):
        memory, state = self.encoder(src, lens)
        mask = src != cfg.pad
        return self.decoder(tgt_in, memory, mask, state)


def main():
    torch.manual_seed(0)
    dev = "cuda"
    model = Seq2Seq().to(dev)
    print(f"{sum(p.numel() for p in model.parameters()) / 1e6:.1f}M parameters")
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    crit = nn.CrossEntropyLoss(ignore_index=cfg.pad, label_smoothing=0.1)

    train = DataLoader(ParallelCorpus(cfg.batch_size * cfg.steps), batch_size=cfg.batch_size, shuffle=True,
                       collate_fn=collate)
    valid = DataLoader(ParallelCorpus(cfg.batch_size, seed=1), batch_size=cfg.batch_size, collate_fn=collate)

    model.train()
    t0 = time.time()
    for step, (src, lens, tgt) in enumerate(train, start=1):
        src, tgt = src.to(dev), tgt.to(dev)
        logits = model(src, lens, tgt[:, :-1])
        loss = crit(logits.reshape(-1, logits.size(-1)), tgt[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), cfg.clip)
        opt.step()
        print(f"step {step} loss {loss.item():.3f} ({time.time() - t0:.1f}s)")

    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for src, lens, tgt in valid:
            src, tgt = src.to(dev), tgt.to(dev)
            logits = model(src, lens, tgt[:, :-1])
            total += F.cross_entropy(logits.transpose(1, 2), tgt[:, 1:], ignore_index=cfg.pad,
                                     reduction="sum").item()
            count += (tgt[:, 1:] != cfg.pad).sum().item()
    print(f"valid nll/token {total / count:.3f}")


if __name__ == "__main__":
    main()
