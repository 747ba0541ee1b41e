"""Multimodal product classifier: nested nn.ModuleDict of encoders (image / text / tabular) and per-task heads."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

CFG = {
    "image": {"size": 256, "patch": 16, "dim": 768, "depth": 8, "heads": 12},
    "text": {"vocab": 30000, "len": 128, "dim": 512, "depth": 6, "heads": 8},
    "tab": {"features": 64, "hidden": 512},
    "fusion_dim": 1024,
    "tasks": {"category": 1200, "brand": 5000, "price_bucket": 20},
    "batch_size": 96,
    "steps": 8,
}


def encoder_stack(dim, depth, heads):
    layer = nn.TransformerEncoderLayer(dim, heads, dim_feedforward=4 * dim, dropout=0.1, activation="gelu",
                                       batch_first=True, norm_first=True)
    return nn.TransformerEncoder(layer, num_layers=depth, enable_nested_tensor=False)


class MultiModalNet(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        ic, tc, fc = cfg["image"], cfg["text"], cfg["tab"]
        n_patches = (ic["size"] // ic["patch"]) ** 2
        self.encoders = nn.ModuleDict({
            "image": nn.ModuleDict({
                "patch": nn.Conv2d(3, ic["dim"], ic["patch"], stride=ic["patch"]),
                "blocks": encoder_stack(ic["dim"], ic["depth"], ic["heads"]),
                "norm": nn.LayerNorm(ic["dim"]),
            }),
            "text": nn.ModuleDict({
                "embed": nn.Embedding(tc["vocab"], tc["dim"], padding_idx=0),
                "blocks": encoder_stack(tc["dim"], tc["depth"], tc["heads"]),
                "norm": nn.LayerNorm(tc["dim"]),
            }),
            "tab": nn.ModuleDict({
                "mlp": nn.Sequential(nn.Linear(fc["features"], fc["hidden"]), nn.ReLU(), nn.Linear(fc["hidden"], fc["hidden"])),
            }),
        })
        self.image_pos = nn.Parameter(torch.zeros(1, n_patches, ic["dim"]))
        self.text_pos = nn.Parameter(torch.zeros(1, tc["len"], tc["dim"]))
        self.proj = nn.ModuleDict({
            "image": nn.Linear(ic["dim"], cfg["fusion_dim"]),
            "text": nn.Linear(tc["dim"], cfg["fusion_dim"]),
            "tab": nn.Linear(fc["hidden"], cfg["fusion_dim"]),
        })
        self.heads = nn.ModuleDict({
            task: nn.Sequential(nn.Linear(3 * cfg["fusion_dim"], cfg["fusion_dim"]), nn.GELU(),
                                nn.Linear(cfg["fusion_dim"], n))
            for task, n in cfg["tasks"].items()
        })

    def forward(self, image, tokens, tab):
        enc = self.encoders
        x = enc["image"]["patch"](image).flatten(2).transpose(1, 2) + self.image_pos
        x = enc["image"]["norm"](enc["image"]["blocks"](x)).mean(1)
        pad = tokens == 0
        t = enc["text"]["embed"](tokens) + self.text_pos
        t = enc["text"]["norm"](enc["text"]["blocks"](t, src_key_padding_mask=pad))
        t = (t * (~pad).unsqueeze(-1)).sum(1) / (~pad).sum(1, keepdim=True).clamp(min=1)
        s = enc["tab"]["mlp"](tab)
        fused = torch.cat([self.proj["image"](x), self.proj["text"](t), self.proj["tab"](s)], dim=-1)
        return {task: head(fused) for task, head in self.heads.items()}


class Products(Dataset):
    def __len__(self):
        return CFG["batch_size"] * CFG["steps"]

    def __getitem__(self, i):
        size, L = CFG["image"]["size"], CFG["text"]["len"]
        tokens = torch.randint(1, CFG["text"]["vocab"], (L,))
        tokens[torch.randint(32, L, ()).item():] = 0
        labels = {k: torch.randint(0, n, ()) for k, n in CFG["tasks"].items()}
        return torch.randn(3, size, size), tokens, torch.randn(CFG["tab"]["features"]), labels


model = MultiModalNet(CFG).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=2e-4, weight_decay=0.05)
loader = DataLoader(Products(), batch_size=CFG["batch_size"], shuffle=True, num_workers=2)
task_weights = {"category": 1.0, "brand": 0.5, "price_bucket": 0.2}

model.train()
for step, (img, tok, tab, labels) in enumerate(loader):
    img, tok, tab = img.cuda(), tok.cuda(), tab.cuda()
    labels = {k: v.cuda() for k, v in labels.items()}
    with torch.autocast("cuda", dtype=torch.bfloat16):
        outs = model(img, tok, tab)
        losses = {k: F.cross_entropy(outs[k], labels[k]) for k in outs}
        loss = sum(task_weights[k] * l for k, l in losses.items())
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    print(step, {k: round(v.item(), 3) for k, v in losses.items()})
