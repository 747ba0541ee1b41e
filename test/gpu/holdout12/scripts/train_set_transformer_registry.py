"""Set Transformer (ISAB encoder + PMA pooling) for point-set classification.

The encoder blocks are looked up in a registry dict by name, so an experiment can swap ISAB for SAB.
Hyper-parameters are a SimpleNamespace.
"""
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

hp = SimpleNamespace(
    set_size=2048, in_dim=3, dim=256, heads=8, inducing=64, n_enc=4, n_seeds=1, n_classes=40,
    enc_block="isab", batch_size=64, lr=1e-3, epochs=2, batches_per_epoch=3, ln=True,
)


class MAB(nn.Module):
    def __init__(self, dim_q, dim_k, dim, heads, ln=False):
        super().__init__()
        self.fc_q = nn.Linear(dim_q, dim)
        self.attn = nn.MultiheadAttention(dim, heads, kdim=dim_k, vdim=dim_k, batch_first=True)
        self.ln0 = nn.LayerNorm(dim) if ln else nn.Identity()
        self.ln1 = nn.LayerNorm(dim) if ln else nn.Identity()
        self.ff = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, dim))

    def forward(self, q, k):
        q = self.fc_q(q)
        h = self.ln0(q + self.attn(q, k, k, need_weights=False)[0])
        return self.ln1(h + self.ff(h))


class SAB(nn.Module):
    def __init__(self, dim_in, dim, heads, ln=False, **_):
        super().__init__()
        self.mab = MAB(dim_in, dim_in, dim, heads, ln)

    def forward(self, x):
        return self.mab(x, x)


class ISAB(nn.Module):
    def __init__(self, dim_in, dim, heads, num_inds=32, ln=False):
        super().__init__()
        self.I = nn.Parameter(torch.empty(1, num_inds, dim))
        nn.init.xavier_uniform_(self.I)
        self.mab0 = MAB(dim, dim_in, dim, heads, ln)
        self.mab1 = MAB(dim_in, dim, dim, heads, ln)

    def forward(self, x):
        h = self.mab0(self.I.expand(x.size(0), -1, -1), x)
        return self.mab1(x, h)


class PMA(nn.Module):
    def __init__(self, dim, heads, num_seeds, ln=False):
        super().__init__()
        self.S = nn.Parameter(torch.empty(1, num_seeds, dim))
        nn.init.xavier_uniform_(self.S)
        self.mab = MAB(dim, dim, dim, heads, ln)

    def forward(self, x):
        return self.mab(self.S.expand(x.size(0), -1, -1), x)


BLOCKS = {"sab": SAB, "isab": ISAB}


class SetTransformer(nn.Module):
    def __init__(self, hp):
        super().__init__()
        block = BLOCKS[hp.enc_block]
        enc = []
        d = hp.in_dim
        for _ in range(hp.n_enc):
            enc.append(block(d, hp.dim, hp.heads, num_inds=hp.inducing, ln=hp.ln))
            d = hp.dim
        self.enc = nn.Sequential(*enc)
        self.pool = PMA(hp.dim, hp.heads, hp.n_seeds, ln=hp.ln)
        self.dec = nn.Sequential(nn.Dropout(0.5), nn.Linear(hp.dim * hp.n_seeds, hp.n_classes))

    def forward(self, x):
        return self.dec(self.pool(self.enc(x)).flatten(1))


class PointSets(Dataset):
    def __init__(self, n, set_size, n_classes):
        self.n, self.set_size, self.n_classes = n, set_size, n_classes

    def __len__(self):
        return self.n

    def __getitem__(self, idx):
        return torch.randn(self.set_size, 3), idx % self.n_classes


def main():
    model = SetTransformer(hp).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=hp.lr)
    loader = DataLoader(PointSets(hp.batch_size * hp.batches_per_epoch, hp.set_size, hp.n_classes),
                        batch_size=hp.batch_size, shuffle=True)
    for epoch in range(hp.epochs):
        for x, y in loader:
            x, y = x.cuda(), y.cuda()
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            print(f"epoch {epoch} loss {loss.item():.3f}")
    print("max mem GiB", torch.cuda.max_memory_allocated() / 2 ** 30)


if __name__ == "__main__":
    main()
