"""ViT trained from scratch on CIFAR-100-sized images (32x32, patch 4), nn.TransformerEncoder layers,
fp16 AMP. Config in a SimpleNamespace."""
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

cfg = SimpleNamespace(
    img_size=32, patch=4, in_ch=3, num_classes=100,
    dim=384, depth=9, heads=12, mlp_ratio=4, dropout=0.0,
    batch_size=1024, lr=1e-3, weight_decay=0.05, warmup=5, steps=6, label_smoothing=0.1,
)


class ViT(nn.Module):
    def __init__(self, c):
        super().__init__()
        n_patches = (c.img_size // c.patch) ** 2
        self.patch_embed = nn.Conv2d(c.in_ch, c.dim, kernel_size=c.patch, stride=c.patch)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, c.dim))
        self.pos_embed = nn.Parameter(torch.randn(1, n_patches + 1, c.dim) * 0.02)
        layer = nn.TransformerEncoderLayer(c.dim, c.heads, dim_feedforward=c.dim * c.mlp_ratio, dropout=c.dropout,
                                           activation="gelu", batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=c.depth, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(c.dim)
        self.head = nn.Linear(c.dim, c.num_classes)

    def forward(self, x):
        x = self.patch_embed(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls_token.expand(x.size(0), -1, -1), x], dim=1) + self.pos_embed
        x = self.encoder(x)
        return self.head(self.norm(x[:, 0]))


def main():
    device = "cuda"
    model = ViT(cfg).to(device)
    print(f"params {sum(p.numel() for p in model.parameters()) / 1e6:.2f}M")
    n = cfg.batch_size * cfg.steps
    ds = TensorDataset(torch.randn(n, 3, cfg.img_size, cfg.img_size), torch.randint(0, cfg.num_classes, (n,)))
    loader = DataLoader(ds, batch_size=cfg.batch_size, shuffle=True, drop_last=True, pin_memory=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    sched = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / cfg.warmup))
    scaler = torch.amp.GradScaler("cuda")

    model.train()
    for step, (x, y) in enumerate(loader):
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.cross_entropy(model(x), y, label_smoothing=cfg.label_smoothing)
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        sched.step()
        print(f"step {step} loss {loss.item():.4f}")

    model.eval()
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.float16):
        acc = (model(x).argmax(-1) == y).float().mean().item()
    print(f"train-batch acc {acc:.3f}")


if __name__ == "__main__":
    main()
