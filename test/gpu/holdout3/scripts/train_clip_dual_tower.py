"""CLIP-style contrastive pretraining: ViT-B/16 image tower + 12-layer text transformer.

Configs are nested dataclasses (TrainConfig -> ClipConfig -> VisionConfig / TextConfig), like open_clip's
model configs. Synthetic image/caption pairs.
"""
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


@dataclass
class VisionConfig:
    image_size: int = 224
    patch_size: int = 16
    width: int = 768
    layers: int = 12
    heads: int = 12
    mlp_ratio: float = 4.0


@dataclass
class TextConfig:
    context_length: int = 77
    vocab_size: int = 49408
    width: int = 512
    layers: int = 12
    heads: int = 8
    mlp_ratio: float = 4.0


@dataclass
class ClipConfig:
    embed_dim: int = 512
    vision: VisionConfig = field(default_factory=VisionConfig)
    text: TextConfig = field(default_factory=TextConfig)


@dataclass
class TrainConfig:
    batch_size: int = 128
    lr: float = 5e-4
    weight_decay: float = 0.2
    warmup: int = 2
    steps: int = 5
    model: ClipConfig = field(default_factory=ClipConfig)


class Attention(nn.Module):
    def __init__(self, dim, heads, causal=False):
        super().__init__()
        self.heads = heads
        self.causal = causal
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        b, n, c = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        x = F.scaled_dot_product_attention(q, k, v, is_causal=self.causal)
        return self.proj(x.transpose(1, 2).reshape(b, n, c))


class ResidualBlock(nn.Module):
    def __init__(self, dim, heads, mlp_ratio, causal=False):
        super().__init__()
        hidden = int(dim * mlp_ratio)
        self.ln_1 = nn.LayerNorm(dim)
        self.attn = Attention(dim, heads, causal)
        self.ln_2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class VisionTower(nn.Module):
    def __init__(self, cfg: VisionConfig, embed_dim: int):
        super().__init__()
        grid = cfg.image_size // cfg.patch_size
        self.conv1 = nn.Conv2d(3, cfg.width, cfg.patch_size, cfg.patch_size, bias=False)
        scale = cfg.width ** -0.5
        self.class_embedding = nn.Parameter(scale * torch.randn(cfg.width))
        self.positional_embedding = nn.Parameter(scale * torch.randn(grid * grid + 1, cfg.width))
        self.ln_pre = nn.LayerNorm(cfg.width)
        self.blocks = nn.Sequential(*[ResidualBlock(cfg.width, cfg.heads, cfg.mlp_ratio) for _ in range(cfg.layers)])
        self.ln_post = nn.LayerNorm(cfg.width)
        self.proj = nn.Parameter(scale * torch.randn(cfg.width, embed_dim))

    def forward(self, x):
        x = self.conv1(x).flatten(2).transpose(1, 2)
        cls = self.class_embedding.to(x.dtype).expand(x.size(0), 1, -1)
        x = torch.cat([cls, x], dim=1) + self.positional_embedding.to(x.dtype)
        x = self.blocks(self.ln_pre(x))
        return self.ln_post(x[:, 0]) @ self.proj


class TextTower(nn.Module):
    def __init__(self, cfg: TextConfig, embed_dim: int):
        super().__init__()
        self.token_embedding = nn.Embedding(cfg.vocab_size, cfg.width)
        self.positional_embedding = nn.Parameter(torch.empty(cfg.context_length, cfg.width).normal_(std=0.01))
        self.blocks = nn.Sequential(*[ResidualBlock(cfg.width, cfg.heads, cfg.mlp_ratio, causal=True)
                                      for _ in range(cfg.layers)])
        self.ln_final = nn.LayerNorm(cfg.width)
        self.text_projection = nn.Parameter(torch.empty(cfg.width, embed_dim).normal_(std=cfg.width ** -0.5))

    def forward(self, tokens):
        x = self.token_embedding(tokens) + self.positional_embedding
        x = self.ln_final(self.blocks(x))
        # features at the EOT token (highest id in each sequence)
        x = x[torch.arange(x.size(0), device=x.device), tokens.argmax(dim=-1)]
        return x @ self.text_projection


class CLIP(nn.Module):
    def __init__(self, cfg: ClipConfig):
        super().__init__()
        self.visual = VisionTower(cfg.vision, cfg.embed_dim)
        self.text = TextTower(cfg.text, cfg.embed_dim)
        self.logit_scale = nn.Parameter(torch.ones([]) * np.log(1 / 0.07))

    def forward(self, images, tokens):
        img = F.normalize(self.visual(images), dim=-1)
        txt = F.normalize(self.text(tokens), dim=-1)
        return img, txt, self.logit_scale.exp()


class PairDataset(Dataset):
    def __init__(self, n, image_size, context_length, vocab_size):
        self.n, self.image_size, self.context_length, self.vocab_size = n, image_size, context_length, vocab_size

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        img = torch.randn(3, self.image_size, self.image_size)
        length = np.random.randint(8, self.context_length)
        tokens = torch.zeros(self.context_length, dtype=torch.long)
        tokens[0] = self.vocab_size - 2                      # SOT
        tokens[1:length - 1] = torch.randint(1, self.vocab_size - 2, (length - 2,))
        tokens[length - 1] = self.vocab_size - 1             # EOT
        return img, tokens


def clip_loss(img, txt, scale):
    logits = scale * img @ txt.t()
    labels = torch.arange(img.size(0), device=img.device)
    return (F.cross_entropy(logits, labels) + F.cross_entropy(logits.t(), labels)) / 2


def main(cfg: TrainConfig = TrainConfig()):
    device = "cuda"
    model = CLIP(cfg.model).to(device)

    exclude = lambda n, p: p.ndim < 2 or "bn" in n or "ln" in n or "bias" in n or "logit_scale" in n
    named = list(model.named_parameters())
    gain_or_bias = [p for n, p in named if exclude(n, p) and p.requires_grad]
    rest = [p for n, p in named if not exclude(n, p) and p.requires_grad]
    optimizer = torch.optim.AdamW(
        [{"params": gain_or_bias, "weight_decay": 0.0}, {"params": rest, "weight_decay": cfg.weight_decay}],
        lr=cfg.lr, betas=(0.9, 0.98), eps=1e-6,
    )
    sched = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / cfg.warmup))

    ds = PairDataset(cfg.batch_size * cfg.steps, cfg.model.vision.image_size, cfg.model.text.context_length,
                     cfg.model.text.vocab_size)
    loader = DataLoader(ds, batch_size=cfg.batch_size, shuffle=True, num_workers=4, drop_last=True,
                        pin_memory=True)
    model.train()
    for i, (images, tokens) in enumerate(loader):
        images = images.to(device, non_blocking=True)
        tokens = tokens.to(device, non_blocking=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            img, txt, scale = model(images, tokens)
            loss = clip_loss(img, txt, scale)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        sched.step()
        with torch.no_grad():
            model.logit_scale.clamp_(0, np.log(100))
        print(f"step {i} loss {loss.item():.4f}")
    print(f"max mem {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
