"""PatchTST-style long-horizon forecaster (channel independence, patching, RevIN).

Electricity-like data: 321 variables, look-back 512, horizon 96.
"""
import argparse

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


def get_args():
    p = argparse.ArgumentParser("patchtst")
    p.add_argument("--seq_len", type=int)
    p.add_argument("--pred_len", type=int)
    p.add_argument("--enc_in", type=int, help="number of variables")
    p.add_argument("--patch_len", type=int)
    p.add_argument("--stride", type=int)
    p.add_argument("--d_model", type=int)
    p.add_argument("--n_heads", type=int)
    p.add_argument("--e_layers", type=int)
    p.add_argument("--d_ff", type=int)
    p.add_argument("--dropout", type=float)
    p.add_argument("--batch_size", type=int)
    p.add_argument("--learning_rate", type=float)
    p.add_argument("--train_steps", type=int)
    # electricity preset, as in the paper's scripts
    p.set_defaults(seq_len=512, pred_len=96, enc_in=321, patch_len=16, stride=8, d_model=128, n_heads=16,
                   e_layers=3, d_ff=256, dropout=0.2, batch_size=32, learning_rate=1e-4, train_steps=6)
    args, _unknown = p.parse_known_args()
    return args


class RevIN(nn.Module):
    def __init__(self, num_features, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))

    def norm(self, x):  # x (B, L, C)
        self.mean = x.mean(1, keepdim=True).detach()
        self.std = torch.sqrt(x.var(1, keepdim=True, unbiased=False) + self.eps).detach()
        return (x - self.mean) / self.std * self.weight + self.bias

    def denorm(self, x):
        return (x - self.bias) / (self.weight + self.eps ** 2) * self.std + self.mean


class PatchTST(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.a = a
        self.num_patches = (a.seq_len - a.patch_len) // a.stride + 2   # +1 for end padding
        self.revin = RevIN(a.enc_in)
        self.pad = nn.ReplicationPad1d((0, a.stride))
        self.proj = nn.Linear(a.patch_len, a.d_model)
        self.pos = nn.Parameter(torch.randn(1, self.num_patches, a.d_model) * 0.02)
        layer = nn.TransformerEncoderLayer(a.d_model, a.n_heads, a.d_ff, a.dropout, activation="gelu",
                                           batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, a.e_layers)
        self.head = nn.Sequential(nn.Flatten(start_dim=-2), nn.Dropout(a.dropout),
                                  nn.Linear(a.d_model * self.num_patches, a.pred_len))

    def forward(self, x):  # (B, L, C)
        B, L, C = x.shape
        x = self.revin.norm(x).permute(0, 2, 1)               # (B, C, L)
        x = self.pad(x)
        x = x.unfold(-1, self.a.patch_len, self.a.stride)     # (B, C, P, patch_len)
        x = self.proj(x).reshape(B * C, self.num_patches, -1) + self.pos
        z = self.encoder(x).reshape(B, C, self.num_patches, -1)
        y = self.head(z).permute(0, 2, 1)                      # (B, pred_len, C)
        return self.revin.denorm(y)


class Windows(Dataset):
    def __init__(self, series, seq_len, pred_len):
        self.s, self.seq_len, self.pred_len = series, seq_len, pred_len

    def __len__(self):
        return self.s.shape[0] - self.seq_len - self.pred_len

    def __getitem__(self, i):
        x = self.s[i:i + self.seq_len]
        y = self.s[i + self.seq_len:i + self.seq_len + self.pred_len]
        return x, y


def main():
    args = get_args()
    t = torch.arange(4000).float()
    series = torch.sin(t[:, None] / torch.linspace(5, 200, args.enc_in)) + 0.1 * torch.randn(4000, args.enc_in)
    loader = DataLoader(Windows(series, args.seq_len, args.pred_len), batch_size=args.batch_size, shuffle=True,
                        drop_last=True)
    model = PatchTST(args).cuda()
    optim = torch.optim.Adam(model.parameters(), lr=args.learning_rate)
    sched = torch.optim.lr_scheduler.OneCycleLR(optim, max_lr=args.learning_rate, total_steps=args.train_steps,
                                                pct_start=0.3)
    crit = nn.MSELoss()
    model.train()
    for it, (bx, by) in enumerate(loader):
        bx, by = bx.cuda(), by.cuda()
        optim.zero_grad()
        out = model(bx)
        loss = crit(out, by)
        loss.backward()
        optim.step()
        sched.step()
        print(f"iter {it + 1} | loss {loss.item():.5f}")
        if it + 1 == args.train_steps:
            break
    print("peak mem (GiB):", round(torch.cuda.max_memory_allocated() / 1024 ** 3, 2))


if __name__ == "__main__":
    main()
