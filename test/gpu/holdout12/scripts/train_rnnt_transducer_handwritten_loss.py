"""RNN-Transducer ASR on random filterbanks, with the transducer loss written by hand.

The joint network materialises a (batch, frames, label_len + 1, vocab) tensor, the usual memory hog of RNN-T;
the forward variable is computed one frame at a time with logcumsumexp over the label axis.
"""
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

N_MELS = 80
SAMPLE_RATE = 16000
HOP = 160
SECONDS = 8
IN_FRAMES = SECONDS * SAMPLE_RATE // HOP          # 800 input frames
SUBSAMPLE = 4
ENC_FRAMES = IN_FRAMES // SUBSAMPLE               # 200 encoder frames
VOCAB = 1024                                      # sentencepiece units, index 0 is blank
MAX_LABEL_LEN = 60
ENC_HIDDEN = 512
PRED_HIDDEN = 512
JOINT_DIM = 512
BATCH_SIZE = 16
LR = 5e-4
STEPS = 5
NEG = -1e4


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.subsample = nn.Sequential(
            nn.Conv2d(1, 64, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(64, 64, 3, stride=2, padding=1), nn.ReLU(),
        )
        self.proj = nn.Linear(64 * (N_MELS // SUBSAMPLE), ENC_HIDDEN)
        self.rnn = nn.LSTM(ENC_HIDDEN, ENC_HIDDEN, num_layers=3, batch_first=True, bidirectional=True, dropout=0.1)

    def forward(self, feats):                     # (B, T, mels)
        x = self.subsample(feats.unsqueeze(1))     # (B, 64, T/4, mels/4)
        x = x.permute(0, 2, 1, 3).flatten(2)
        out, _ = self.rnn(self.proj(x))
        return out                                 # (B, T/4, 2H)


class Predictor(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, PRED_HIDDEN)
        self.rnn = nn.LSTM(PRED_HIDDEN, PRED_HIDDEN, num_layers=1, batch_first=True)

    def forward(self, labels):                    # (B, U)
        start = torch.zeros(labels.size(0), 1, dtype=labels.dtype, device=labels.device)  # blank as <sos>
        out, _ = self.rnn(self.embed(torch.cat([start, labels], 1)))
        return out                                 # (B, U + 1, H)


class Joint(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(2 * ENC_HIDDEN, JOINT_DIM)
        self.pred = nn.Linear(PRED_HIDDEN, JOINT_DIM)
        self.out = nn.Linear(JOINT_DIM, VOCAB)

    def forward(self, f, g):
        h = torch.tanh(self.enc(f).unsqueeze(2) + self.pred(g).unsqueeze(1))   # (B, T, U+1, J)
        return self.out(h)                                                       # (B, T, U+1, V)


class Transducer(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder, self.predictor, self.joint = Encoder(), Predictor(), Joint()

    def forward(self, feats, labels):
        return self.joint(self.encoder(feats), self.predictor(labels))


def rnnt_loss(logits, labels):
    """Negative log-likelihood of `labels` under the transducer lattice (all sequences full length)."""
    B, T, U1, V = logits.shape
    lp = logits.log_softmax(-1)
    blank = lp[..., 0]                                                            # (B, T, U+1)
    emit = lp[:, :, :-1].gather(-1, labels[:, None, :, None].expand(B, T, U1 - 1, 1)).squeeze(-1)  # (B, T, U)
    a = torch.full((B, U1), NEG, device=logits.device)
    a[:, 0] = 0.0
    alpha = None
    for t in range(T):
        c = F.pad(emit[:, t].cumsum(-1), (1, 0))                                  # (B, U+1)
        alpha = c + torch.logcumsumexp(a - c, dim=-1)
        a = alpha + blank[:, t]
    return -(a[:, -1]).mean()


def main():
    device = torch.device("cuda")
    model = Transducer().to(device)
    print("params: %.1fM" % (sum(p.numel() for p in model.parameters()) / 1e6))
    opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=1e-3)
    t0 = time.time()
    for step in range(STEPS):
        feats = torch.randn(BATCH_SIZE, IN_FRAMES, N_MELS, device=device)
        labels = torch.randint(1, VOCAB, (BATCH_SIZE, MAX_LABEL_LEN), device=device)
        logits = model(feats, labels)
        loss = rnnt_loss(logits, labels) / MAX_LABEL_LEN
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
        print(f"step {step} loss/token {loss.item():.3f} ({time.time() - t0:.1f}s)")
    print("peak allocated %.2f GiB" % (torch.cuda.max_memory_allocated() / 2 ** 30))


if __name__ == "__main__":
    main()
