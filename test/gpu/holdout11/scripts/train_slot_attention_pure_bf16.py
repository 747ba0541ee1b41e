"""Slot Attention auto-encoder (Locatello et al. 2020) on CLEVR-like 128x128 images.

The whole model is cast to bfloat16 (model.to(torch.bfloat16)) and trained without autocast; the
spatial-broadcast decoder decodes every slot separately to a full-resolution RGB + mask image.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


def build_grid(resolution):
    ranges = [torch.linspace(0.0, 1.0, steps=r) for r in resolution]
    grid = torch.stack(torch.meshgrid(*ranges, indexing="ij"), dim=-1)
    grid = grid.unsqueeze(0)
    return torch.cat([grid, 1.0 - grid], dim=-1)  # (1, H, W, 4)


class SoftPositionEmbed(nn.Module):
    def __init__(self, hidden, resolution):
        super().__init__()
        self.dense = nn.Linear(4, hidden)
        self.register_buffer("grid", build_grid(resolution))

    def forward(self, x):  # x: (B, H, W, C)
        return x + self.dense(self.grid.to(x.dtype))


class SlotAttention(nn.Module):
    def __init__(self, num_slots, dim, iters=3, hidden=128, eps=1e-8):
        super().__init__()
        self.num_slots, self.iters, self.eps, self.scale = num_slots, iters, eps, dim ** -0.5
        self.slots_mu = nn.Parameter(torch.randn(1, 1, dim))
        self.slots_logsigma = nn.Parameter(torch.zeros(1, 1, dim))
        self.to_q, self.to_k, self.to_v = nn.Linear(dim, dim), nn.Linear(dim, dim), nn.Linear(dim, dim)
        self.gru = nn.GRUCell(dim, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.ReLU(inplace=True), nn.Linear(hidden, dim))
        self.norm_input, self.norm_slots, self.norm_mlp = nn.LayerNorm(dim), nn.LayerNorm(dim), nn.LayerNorm(dim)

    def forward(self, inputs):
        b, n, d = inputs.shape
        mu = self.slots_mu.expand(b, self.num_slots, -1)
        sigma = self.slots_logsigma.exp().expand(b, self.num_slots, -1)
        slots = mu + sigma * torch.randn_like(mu)
        inputs = self.norm_input(inputs)
        k, v = self.to_k(inputs), self.to_v(inputs)
        for _ in range(self.iters):
            slots_prev = slots
            q = self.to_q(self.norm_slots(slots))
            dots = torch.einsum("bid,bjd->bij", q, k) * self.scale
            attn = dots.softmax(dim=1) + self.eps
            attn = attn / attn.sum(dim=-1, keepdim=True)
            updates = torch.einsum("bjd,bij->bid", v, attn)
            slots = self.gru(updates.reshape(-1, d), slots_prev.reshape(-1, d)).reshape(b, -1, d)
            slots = slots + self.mlp(self.norm_mlp(slots))
        return slots


class SlotAttentionAutoEncoder(nn.Module):
    def __init__(self, resolution=(128, 128), num_slots=7, num_iters=3, hid=64, decoder_init=8):
        super().__init__()
        self.resolution, self.num_slots, self.hid, self.decoder_init = resolution, num_slots, hid, decoder_init
        self.encoder_cnn = nn.Sequential(*[m for i in range(4) for m in
                                           (nn.Conv2d(3 if i == 0 else hid, hid, 5, padding=2), nn.ReLU(inplace=True))])
        self.encoder_pos = SoftPositionEmbed(hid, resolution)
        self.mlp = nn.Sequential(nn.Linear(hid, hid), nn.ReLU(inplace=True), nn.Linear(hid, hid))
        self.slot_attention = SlotAttention(num_slots, hid, num_iters)
        self.decoder_pos = SoftPositionEmbed(hid, (decoder_init, decoder_init))
        layers = []
        for _ in range(4):  # 8 -> 128
            layers += [nn.ConvTranspose2d(hid, hid, 5, stride=2, padding=2, output_padding=1), nn.ReLU(inplace=True)]
        layers += [nn.ConvTranspose2d(hid, hid, 5, stride=1, padding=2), nn.ReLU(inplace=True),
                   nn.ConvTranspose2d(hid, 4, 3, stride=1, padding=1)]
        self.decoder_cnn = nn.Sequential(*layers)
        self.norm = nn.LayerNorm(hid)

    def forward(self, image):
        b = image.shape[0]
        x = self.encoder_cnn(image).permute(0, 2, 3, 1)
        x = self.encoder_pos(x).flatten(1, 2)
        x = self.mlp(self.norm(x))
        slots = self.slot_attention(x)  # (B, K, D)
        s = slots.reshape(-1, self.hid)[:, None, None, :].repeat(1, self.decoder_init, self.decoder_init, 1)
        s = self.decoder_pos(s).permute(0, 3, 1, 2)
        out = self.decoder_cnn(s)  # (B*K, 4, H, W)
        out = out.reshape(b, self.num_slots, 4, *self.resolution)
        recons, masks = out[:, :, :3], out[:, :, 3:].softmax(dim=1)
        return (recons * masks).sum(dim=1), recons, masks, slots


class FakeCLEVR(Dataset):
    def __init__(self, n, res):
        self.n, self.res = n, res

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.rand(3, *self.res) * 2 - 1


def main(batch_size=64, resolution=(128, 128), num_slots=7, num_iters=3, lr=4e-4, steps=4):
    device = "cuda"
    model = SlotAttentionAutoEncoder(resolution, num_slots, num_iters).to(device)
    model = model.to(torch.bfloat16)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    loader = DataLoader(FakeCLEVR(batch_size * steps, resolution), batch_size=batch_size, shuffle=True,
                        num_workers=4, drop_last=True)
    model.train()
    for step, image in enumerate(loader):
        image = image.to(device, dtype=torch.bfloat16)
        recon, _, _, _ = model(image)
        loss = F.mse_loss(recon, image)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"step {step}: mse {loss.item():.4f}")


if __name__ == "__main__":
    main()
