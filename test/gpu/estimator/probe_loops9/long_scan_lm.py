import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB, D, LAYERS, N, SEQ, BATCH = 8000, 256, 4, 16, 1024, 4


class Scan(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(D, 2 * D)
        self.dt = nn.Linear(D, D)
        self.bc = nn.Linear(D, 2 * N)
        A = torch.arange(1, N + 1, dtype=torch.float32).repeat(2 * D // 2, 1)
        self.A_log = nn.Parameter(torch.log(A))
        self.out = nn.Linear(D, D)

    def forward(self, x):
        u, gate = self.inp(x).chunk(2, dim=-1)
        u = F.silu(u)
        delta = F.softplus(self.dt(u))
        B, C = self.bc(u).chunk(2, dim=-1)
        dA = torch.exp(delta.unsqueeze(-1) * -torch.exp(self.A_log))
        dBu = (delta * u).unsqueeze(-1) * B.unsqueeze(2)
        h = torch.zeros(x.size(0), D, N, device=x.device)
        ys = []
        for t in range(x.size(1)):
            h = dA[:, t] * h + dBu[:, t]
            ys.append(torch.einsum("bdn,bn->bd", h, C[:, t]))
        y = torch.stack(ys, dim=1)
        return x + self.out(y * F.silu(gate))


class LM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, D)
        self.blocks = nn.ModuleList([Scan() for _ in range(LAYERS)])
        self.head = nn.Linear(D, VOCAB, bias=False)

    def forward(self, ids):
        x = self.emb(ids)
        for block in self.blocks:
            x = block(x)
        return self.head(x)


model = LM().cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(3):
    ids = torch.randint(0, VOCAB, (BATCH, SEQ + 1), device="cuda")
    logits = model(ids[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, VOCAB), ids[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
