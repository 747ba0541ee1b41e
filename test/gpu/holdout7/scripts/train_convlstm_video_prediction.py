"""Next-frame prediction with a stacked ConvLSTM (Moving-MNIST style, 64x64 frames).

The encoder reads 10 frames, the forecaster rolls out 10 more; the cells are unrolled by hand in Python loops,
so every time step's gate tensors stay in the graph until backward. fp32, Adam, gradient clipping.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

SEQ_IN, SEQ_OUT = 10, 10
FRAME = 64
HIDDEN = [128, 64, 64]
KERNEL = 5
BATCH = 16
STEPS = 5


class ConvLSTMCell(nn.Module):
    def __init__(self, in_ch, hid_ch, k):
        super().__init__()
        self.hid_ch = hid_ch
        self.gates = nn.Conv2d(in_ch + hid_ch, 4 * hid_ch, k, padding=k // 2)

    def forward(self, x, state):
        h, c = state
        i, f, o, g = self.gates(torch.cat([x, h], dim=1)).chunk(4, dim=1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        return h, c

    def init_state(self, b, size, device):
        z = torch.zeros(b, self.hid_ch, size, size, device=device)
        return z, z.clone()


class Seq2SeqConvLSTM(nn.Module):
    def __init__(self):
        super().__init__()
        chans = [1] + HIDDEN
        self.enc = nn.ModuleList(ConvLSTMCell(chans[i], chans[i + 1], KERNEL) for i in range(len(HIDDEN)))
        self.dec = nn.ModuleList(ConvLSTMCell(chans[i], chans[i + 1], KERNEL) for i in range(len(HIDDEN)))
        self.head = nn.Conv2d(sum(HIDDEN), 1, 1)

    def forward(self, frames):                      # frames: (B, T, 1, H, W)
        b, t, _, hgt, _ = frames.shape
        states = [cell.init_state(b, hgt, frames.device) for cell in self.enc]
        for step in range(t):
            x = frames[:, step]
            for li, cell in enumerate(self.enc):
                states[li] = cell(x, states[li])
                x = states[li][0]
        preds = []
        x_prev = frames[:, -1]
        for _ in range(SEQ_OUT):
            x, hs = x_prev, []
            for li, cell in enumerate(self.dec):
                states[li] = cell(x, states[li])
                x = states[li][0]
                hs.append(x)
            y = torch.sigmoid(self.head(torch.cat(hs, dim=1)))
            preds.append(y)
            x_prev = y
        return torch.stack(preds, dim=1)


class MovingDigits(Dataset):
    def __len__(self):
        return BATCH * STEPS

    def __getitem__(self, i):
        seq = (torch.rand(SEQ_IN + SEQ_OUT, 1, FRAME, FRAME) > 0.95).float()
        return seq[:SEQ_IN], seq[SEQ_IN:]


model = Seq2SeqConvLSTM().cuda()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(1):
    for it, (inp, tgt) in enumerate(DataLoader(MovingDigits(), batch_size=BATCH, shuffle=True)):
        inp, tgt = inp.cuda(), tgt.cuda()
        pred = model(inp)
        loss = F.binary_cross_entropy(pred, tgt)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        print(f"iter {it} bce {loss.item():.4f}")
