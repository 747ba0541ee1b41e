"""Seq2seq translation with torch.nn.Transformer (base: 6+6 layers, d512), Noam schedule, bf16 autocast."""
import math

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

SRC_VOCAB = 32000
TGT_VOCAB = 32000
D_MODEL = 512
NHEAD = 8
FFN = 4 * D_MODEL
N_ENC = N_DEC = 6
DROPOUT = 0.1
MAX_LEN = 5000          # capacity of the positional table
SRC_LEN = 100
TGT_LEN = 100
BATCH_SIZE = 96
WARMUP = 4000
STEPS = 8
PAD, BOS, EOS = 0, 1, 2


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, dropout, max_len=MAX_LEN):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        pos = torch.arange(max_len).unsqueeze(1)
        div = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, d_model)
        pe[:, 0::2] = torch.sin(pos * div)
        pe[:, 1::2] = torch.cos(pos * div)
        self.register_buffer("pe", pe.unsqueeze(0))

    def forward(self, x):
        return self.dropout(x + self.pe[:, : x.size(1)])


class Seq2SeqTransformer(nn.Module):
    def __init__(self, src_vocab, tgt_vocab, d_model, nhead, n_enc, n_dec, ffn, dropout):
        super().__init__()
        self.src_tok = nn.Embedding(src_vocab, d_model, padding_idx=PAD)
        self.tgt_tok = nn.Embedding(tgt_vocab, d_model, padding_idx=PAD)
        self.pos = PositionalEncoding(d_model, dropout)
        self.transformer = nn.Transformer(d_model=d_model, nhead=nhead, num_encoder_layers=n_enc,
                                          num_decoder_layers=n_dec, dim_feedforward=ffn, dropout=dropout,
                                          batch_first=True)
        self.generator = nn.Linear(d_model, tgt_vocab)
        self.scale = math.sqrt(d_model)

    def forward(self, src, tgt_in):
        src_pad = src == PAD
        tgt_pad = tgt_in == PAD
        causal = nn.Transformer.generate_square_subsequent_mask(tgt_in.size(1), device=src.device)
        s = self.pos(self.src_tok(src) * self.scale)
        t = self.pos(self.tgt_tok(tgt_in) * self.scale)
        h = self.transformer(s, t, tgt_mask=causal, src_key_padding_mask=src_pad,
                             tgt_key_padding_mask=tgt_pad, memory_key_padding_mask=src_pad)
        return self.generator(h)


class PairData(Dataset):
    def __len__(self):
        return BATCH_SIZE * STEPS

    def __getitem__(self, i):
        src = torch.randint(3, SRC_VOCAB, (SRC_LEN,))
        tgt = torch.randint(3, TGT_VOCAB, (TGT_LEN + 1,))
        tgt[0], tgt[-1] = BOS, EOS
        return src, tgt


def noam(step, d_model=D_MODEL, warmup=WARMUP):
    step = max(step, 1)
    return d_model ** -0.5 * min(step ** -0.5, step * warmup ** -1.5)


model = Seq2SeqTransformer(SRC_VOCAB, TGT_VOCAB, D_MODEL, NHEAD, N_ENC, N_DEC, FFN, DROPOUT).cuda()
for p in model.parameters():
    if p.dim() > 1:
        nn.init.xavier_uniform_(p)
optimizer = torch.optim.Adam(model.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9)
scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, noam)
criterion = nn.CrossEntropyLoss(ignore_index=PAD, label_smoothing=0.1)
loader = DataLoader(PairData(), batch_size=BATCH_SIZE, shuffle=True)

model.train()
for step, (src, tgt) in enumerate(loader, start=1):
    src, tgt = src.cuda(), tgt.cuda()
    tgt_in, tgt_out = tgt[:, :-1], tgt[:, 1:]
    with torch.autocast("cuda", dtype=torch.bfloat16):
        logits = model(src, tgt_in)
        loss = criterion(logits.reshape(-1, TGT_VOCAB), tgt_out.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    scheduler.step()
    print(f"{step:4d} loss={loss.item():.3f} lr={scheduler.get_last_lr()[0]:.2e}")
