import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH, IN_CAPS, OUT_CAPS, IN_DIM, OUT_DIM = 64, 1152, 10, 8, 16


class Caps(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 256, 9)
        self.prim = nn.Conv2d(256, 256, 9, stride=2)
        self.W = nn.Parameter(0.01 * torch.randn(1, IN_CAPS, OUT_CAPS, OUT_DIM, IN_DIM))

    def forward(self, x):
        u = self.prim(F.relu(self.conv(x)))
        u = u.view(x.size(0), IN_CAPS, IN_DIM)
        u_hat = torch.matmul(self.W, u[:, :, None, :, None]).squeeze(-1)
        s = u_hat.sum(dim=1)
        return s.norm(dim=-1)


model = Caps().cuda()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(3):
    x = torch.rand(BATCH, 1, 28, 28, device="cuda")
    y = torch.randint(0, OUT_CAPS, (BATCH,), device="cuda")
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
