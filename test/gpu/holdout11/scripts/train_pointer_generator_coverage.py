"""Pointer-generator network with coverage (See et al. 2017) for abstractive summarization.

BiLSTM encoder, LSTM decoder with additive attention; the final distribution mixes the vocabulary
softmax with copy attention over the source (extended vocabulary for source OOVs). Teacher forcing.
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

parser = argparse.ArgumentParser()
parser.add_argument("--vocab_size", type=int, default=50000)
parser.add_argument("--emb_dim", type=int, default=128)
parser.add_argument("--hidden_dim", type=int, default=256)
parser.add_argument("--max_enc_steps", type=int, default=400)
parser.add_argument("--max_dec_steps", type=int, default=100)
parser.add_argument("--max_oovs", type=int, default=50)
parser.add_argument("--batch_size", type=int, default=32)
parser.add_argument("--cov_loss_wt", type=float, default=1.0)
parser.add_argument("--lr", type=float, default=0.15)
parser.add_argument("--adagrad_init_acc", type=float, default=0.1)
parser.add_argument("--max_iter", type=int, default=4)
hps = parser.parse_args()


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(hps.emb_dim, hps.hidden_dim, num_layers=1, batch_first=True, bidirectional=True)
        self.W_h = nn.Linear(hps.hidden_dim * 2, hps.hidden_dim * 2, bias=False)
        self.reduce_h = nn.Linear(hps.hidden_dim * 2, hps.hidden_dim)
        self.reduce_c = nn.Linear(hps.hidden_dim * 2, hps.hidden_dim)

    def forward(self, emb):
        out, (h, c) = self.lstm(emb)
        feats = self.W_h(out)
        h = F.relu(self.reduce_h(torch.cat([h[0], h[1]], -1)))
        c = F.relu(self.reduce_c(torch.cat([c[0], c[1]], -1)))
        return out, feats, (h, c)


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.decode_proj = nn.Linear(hps.hidden_dim * 2, hps.hidden_dim * 2)
        self.W_c = nn.Linear(1, hps.hidden_dim * 2, bias=False)
        self.v = nn.Linear(hps.hidden_dim * 2, 1, bias=False)

    def forward(self, s_t, enc_out, enc_feats, pad_mask, coverage):
        dec_fea = self.decode_proj(s_t).unsqueeze(1)
        att = enc_feats + dec_fea + self.W_c(coverage.unsqueeze(-1))
        scores = self.v(torch.tanh(att)).squeeze(-1)
        attn = F.softmax(scores, dim=1) * pad_mask
        attn = attn / attn.sum(1, keepdim=True)
        context = torch.bmm(attn.unsqueeze(1), enc_out).squeeze(1)
        return context, attn, coverage + attn


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.x_context = nn.Linear(hps.hidden_dim * 2 + hps.emb_dim, hps.emb_dim)
        self.lstm = nn.LSTMCell(hps.emb_dim, hps.hidden_dim)
        self.attention = Attention()
        self.p_gen_linear = nn.Linear(hps.hidden_dim * 4 + hps.emb_dim, 1)
        self.out1 = nn.Linear(hps.hidden_dim * 3, hps.hidden_dim)
        self.out2 = nn.Linear(hps.hidden_dim, hps.vocab_size)

    def forward(self, y_emb, state, context, enc_out, enc_feats, pad_mask, ext_ids, extra_zeros, coverage):
        x = self.x_context(torch.cat([context, y_emb], 1))
        h, c = self.lstm(x, state)
        s_t = torch.cat([h, c], 1)
        context, attn, next_cov = self.attention(s_t, enc_out, enc_feats, pad_mask, coverage)
        p_gen = torch.sigmoid(self.p_gen_linear(torch.cat([context, s_t, x], 1)))
        vocab_dist = F.softmax(self.out2(self.out1(torch.cat([h, context], 1))), dim=1)
        vocab_dist = torch.cat([p_gen * vocab_dist, extra_zeros], 1)
        final = vocab_dist.scatter_add(1, ext_ids, (1 - p_gen) * attn)
        return final, (h, c), context, attn, next_cov


class PointerGenerator(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(hps.vocab_size, hps.emb_dim)
        self.encoder = Encoder()
        self.decoder = Decoder()

    def forward(self, enc_ids, enc_ext_ids, pad_mask, dec_in, target):
        B = enc_ids.size(0)
        enc_out, enc_feats, state = self.encoder(self.embedding(enc_ids))
        context = enc_out.new_zeros(B, hps.hidden_dim * 2)
        coverage = enc_out.new_zeros(B, enc_ids.size(1))
        extra_zeros = enc_out.new_zeros(B, hps.max_oovs)
        step_losses = []
        for t in range(dec_in.size(1)):
            final, state, context, attn, next_cov = self.decoder(
                self.embedding(dec_in[:, t]), state, context, enc_out, enc_feats, pad_mask, enc_ext_ids,
                extra_zeros, coverage)
            gold = final.gather(1, target[:, t].unsqueeze(1)).squeeze(1)
            loss_t = -torch.log(gold + 1e-12) + hps.cov_loss_wt * torch.sum(torch.min(attn, coverage), 1)
            step_losses.append(loss_t)
            coverage = next_cov
        return torch.stack(step_losses, 1).mean()


class FakeCNNDM(Dataset):
    def __len__(self):
        return hps.batch_size * hps.max_iter

    def __getitem__(self, i):
        enc = torch.randint(4, hps.vocab_size, (hps.max_enc_steps,))
        ext = enc.clone()
        oov_pos = torch.rand(hps.max_enc_steps) < 0.05
        ext[oov_pos] = hps.vocab_size + torch.randint(0, hps.max_oovs, (int(oov_pos.sum()),))
        enc[oov_pos] = 1  # UNK
        n = torch.randint(hps.max_enc_steps // 2, hps.max_enc_steps + 1, ()).item()
        mask = (torch.arange(hps.max_enc_steps) < n).float()
        target = torch.randint(4, hps.vocab_size + hps.max_oovs, (hps.max_dec_steps,))
        dec_in = torch.cat([torch.tensor([2]), target[:-1].clamp(max=hps.vocab_size - 1)])
        return enc, ext, mask, dec_in, target


def main():
    device = torch.device("cuda")
    model = PointerGenerator().to(device)
    optimizer = torch.optim.Adagrad(model.parameters(), lr=hps.lr, initial_accumulator_value=hps.adagrad_init_acc)
    loader = DataLoader(FakeCNNDM(), batch_size=hps.batch_size, shuffle=True, num_workers=2)
    model.train()
    for it, batch in enumerate(loader):
        enc, ext, mask, dec_in, target = (t.to(device) for t in batch)
        loss = model(enc, ext, mask, dec_in, target)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 2.0)
        optimizer.step()
        print(f"iter {it}: loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
