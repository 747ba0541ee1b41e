"""Batch translation with a trained-from-scratch encoder-decoder Transformer: greedy decoding written by
hand, re-running the decoder over the whole prefix at every step (no KV cache), bf16 autocast, no_grad.
Only inference; random weights stand in for the checkpoint.
"""
import math
import time

import torch
import torch.nn as nn

SRC_VOCAB = 32000
TGT_VOCAB = 32000
D_MODEL = 512
N_HEADS = 8
N_ENC = 6
N_DEC = 6
FFN = 4 * D_MODEL
MAX_POS = 1024
PAD, BOS, EOS = 0, 1, 2

BATCH_SIZE = 512
SRC_LEN = 256
N_BATCHES = 2


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=MAX_POS):
        super().__init__()
        pe = torch.zeros(max_len, d_model)
        pos = torch.arange(max_len).unsqueeze(1)
        div = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(pos * div)
        pe[:, 1::2] = torch.cos(pos * div)
        self.register_buffer("pe", pe)

    def forward(self, x):
        return x + self.pe[: x.size(1)]


class Seq2SeqTransformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.src_emb = nn.Embedding(SRC_VOCAB, D_MODEL, padding_idx=PAD)
        self.tgt_emb = nn.Embedding(TGT_VOCAB, D_MODEL, padding_idx=PAD)
        self.pos = PositionalEncoding(D_MODEL)
        enc_layer = nn.TransformerEncoderLayer(D_MODEL, N_HEADS, FFN, dropout=0.1, batch_first=True, norm_first=True)
        dec_layer = nn.TransformerDecoderLayer(D_MODEL, N_HEADS, FFN, dropout=0.1, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(enc_layer, N_ENC, norm=nn.LayerNorm(D_MODEL), enable_nested_tensor=False)
        self.decoder = nn.TransformerDecoder(dec_layer, N_DEC, norm=nn.LayerNorm(D_MODEL))
        self.generator = nn.Linear(D_MODEL, TGT_VOCAB)

    def encode(self, src):
        pad_mask = src == PAD
        x = self.pos(self.src_emb(src) * math.sqrt(D_MODEL))
        return self.encoder(x, src_key_padding_mask=pad_mask), pad_mask

    def decode(self, ys, memory, memory_pad_mask):
        T = ys.size(1)
        causal = nn.Transformer.generate_square_subsequent_mask(T, device=ys.device)
        x = self.pos(self.tgt_emb(ys) * math.sqrt(D_MODEL))
        return self.decoder(x, memory, tgt_mask=causal, memory_key_padding_mask=memory_pad_mask, tgt_is_causal=True)


@torch.no_grad()
def greedy_decode(model, src, max_new_tokens=None):
    max_new_tokens = max_new_tokens or int(src.size(1) * 0.5)
    memory, pad_mask = model.encode(src)
    ys = torch.full((src.size(0), 1), BOS, dtype=torch.long, device=src.device)
    finished = torch.zeros(src.size(0), dtype=torch.bool, device=src.device)
    for _ in range(max_new_tokens):
        out = model.decode(ys, memory, pad_mask)
        next_tok = model.generator(out[:, -1]).argmax(-1)
        next_tok = torch.where(finished, torch.full_like(next_tok, PAD), next_tok)
        ys = torch.cat([ys, next_tok.unsqueeze(1)], dim=1)
        finished |= next_tok == EOS
        if finished.all():
            break
    return ys


def main():
    device = "cuda"
    model = Seq2SeqTransformer().to(device).eval()
    print(f"{sum(p.numel() for p in model.parameters()) / 1e6:.1f}M params")
    t0 = time.time()
    outputs = []
    for b in range(N_BATCHES):
        src = torch.randint(3, SRC_VOCAB, (BATCH_SIZE, SRC_LEN), device=device)
        lengths = torch.randint(SRC_LEN // 2, SRC_LEN + 1, (BATCH_SIZE,), device=device)
        src[torch.arange(SRC_LEN, device=device)[None] >= lengths[:, None]] = PAD
        with torch.autocast("cuda", dtype=torch.bfloat16):
            hyp = greedy_decode(model, src)
        outputs.extend(hyp.cpu().tolist())
        print(f"batch {b}: decoded {hyp.shape} in {time.time() - t0:.1f}s")
    print(f"{len(outputs)} sentences, peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
