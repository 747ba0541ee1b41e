"""Multi-label tagging (COCO-80 style) with a Query2Label head.

Backbone: a torchvision classifier picked by name, cut before its pooling with
nn.Sequential(*list(net.children())[:-2]); head: a 2-layer transformer decoder whose 80 learned label
queries attend to the feature map. Asymmetric loss; channels_last + bf16 autocast.
"""
import torch
import torch.nn as nn
import torchvision.models as models
from torch.utils.data import DataLoader, Dataset

CFG = dict(
    arch="resnet101",
    feat_dim=2048,
    num_classes=80,
    hidden=512,
    dec_layers=2,
    heads=8,
    img_size=448,
    batch_size=48,
    steps=5,
    lr=1e-4,
)


class Query2Label(nn.Module):
    def __init__(self, arch, feat_dim, num_classes, hidden, dec_layers, heads):
        super().__init__()
        net = getattr(models, arch)(weights=None)
        self.backbone = nn.Sequential(*list(net.children())[:-2])
        self.input_proj = nn.Conv2d(feat_dim, hidden, 1)
        self.pos = nn.Parameter(torch.zeros(1, 32 * 32, hidden))
        layer = nn.TransformerDecoderLayer(hidden, heads, dim_feedforward=4 * hidden, dropout=0.1, batch_first=True)
        self.decoder = nn.TransformerDecoder(layer, num_layers=dec_layers)
        self.queries = nn.Embedding(num_classes, hidden)
        self.group_fc = nn.Parameter(torch.randn(num_classes, hidden) * hidden ** -0.5)
        self.group_bias = nn.Parameter(torch.zeros(num_classes))

    def forward(self, x):
        f = self.input_proj(self.backbone(x))                   # (B, hidden, H/32, W/32)
        B, C, H, W = f.shape
        mem = f.flatten(2).transpose(1, 2) + self.pos[:, : H * W]
        q = self.queries.weight.unsqueeze(0).expand(B, -1, -1)
        h = self.decoder(q, mem)                                # (B, num_classes, hidden)
        return (h * self.group_fc).sum(-1) + self.group_bias


class AsymmetricLoss(nn.Module):
    def __init__(self, gamma_neg=4.0, gamma_pos=0.0, clip=0.05, eps=1e-8):
        super().__init__()
        self.gamma_neg, self.gamma_pos, self.clip, self.eps = gamma_neg, gamma_pos, clip, eps

    def forward(self, logits, y):
        p = torch.sigmoid(logits)
        p_neg = (1 - p + self.clip).clamp(max=1)
        loss_pos = y * torch.log(p.clamp(min=self.eps)) * (1 - p) ** self.gamma_pos
        loss_neg = (1 - y) * torch.log(p_neg.clamp(min=self.eps)) * (1 - p_neg) ** self.gamma_neg
        return -(loss_pos + loss_neg).sum() / logits.shape[0]


class MultiLabelImages(Dataset):
    def __init__(self, n, size, num_classes):
        self.n, self.size, self.nc = n, size, num_classes

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        y = (torch.rand(self.nc) < 0.04).float()
        return torch.randn(3, self.size, self.size), y


def main(cfg=CFG):
    model = Query2Label(cfg["arch"], cfg["feat_dim"], cfg["num_classes"], cfg["hidden"], cfg["dec_layers"],
                        cfg["heads"]).cuda().to(memory_format=torch.channels_last)
    print(f"params: {sum(p.numel() for p in model.parameters()) / 1e6:.1f}M")
    crit = AsymmetricLoss()
    opt = torch.optim.AdamW(model.parameters(), lr=cfg["lr"], weight_decay=1e-2)
    loader = DataLoader(MultiLabelImages(cfg["batch_size"] * cfg["steps"], cfg["img_size"], cfg["num_classes"]),
                        batch_size=cfg["batch_size"], shuffle=True, num_workers=6, pin_memory=True)
    model.train()
    for step, (x, y) in enumerate(loader):
        x = x.cuda(non_blocking=True).to(memory_format=torch.channels_last)
        y = y.cuda(non_blocking=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(x)
        loss = crit(logits.float(), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        print(f"step {step} loss {loss.item():.2f}")
    print("peak GiB", torch.cuda.max_memory_allocated() / 2**30)


if __name__ == "__main__":
    main()
