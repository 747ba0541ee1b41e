"""PoolFormer (MetaFormer with average-pool token mixing) written from scratch, built through a small
model factory that forwards **kwargs through three functions, configured by dataclasses with
field(default_factory=...) lists. Stochastic depth (drop path) grows linearly with depth; blocks run under
torch.utils.checkpoint when cfg.model.grad_checkpointing is set. fp16 autocast + GradScaler."""
from dataclasses import dataclass, field

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint
from torch.utils.data import DataLoader, Dataset


@dataclass
class ModelCfg:
    variant: str = "poolformer_s24"
    num_classes: int = 1000
    drop_path_rate: float = 0.1
    layer_scale_init: float = 1e-5
    grad_checkpointing: bool = True


@dataclass
class DataCfg:
    image_size: int = 224
    batch_size: int = 128
    mean: list = field(default_factory=lambda: [0.485, 0.456, 0.406])
    std: list = field(default_factory=lambda: [0.229, 0.224, 0.225])


@dataclass
class OptimCfg:
    lr: float = 1e-3
    weight_decay: float = 0.05
    betas: tuple = (0.9, 0.999)
    steps: int = 8


@dataclass
class Config:
    model: ModelCfg = field(default_factory=ModelCfg)
    data: DataCfg = field(default_factory=DataCfg)
    optim: OptimCfg = field(default_factory=OptimCfg)


VARIANTS = {
    "poolformer_s12": dict(depths=[2, 2, 6, 2], dims=[64, 128, 320, 512]),
    "poolformer_s24": dict(depths=[4, 4, 12, 4], dims=[64, 128, 320, 512]),
    "poolformer_s36": dict(depths=[6, 6, 18, 6], dims=[64, 128, 320, 512]),
    "poolformer_m36": dict(depths=[6, 6, 18, 6], dims=[96, 192, 384, 768]),
}


def drop_path(x, p, training):
    if p == 0.0 or not training:
        return x
    keep = 1 - p
    mask = x.new_empty((x.shape[0],) + (1,) * (x.ndim - 1)).bernoulli_(keep)
    return x * mask / keep


class DropPath(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.p = p

    def forward(self, x):
        return drop_path(x, self.p, self.training)


class Pooling(nn.Module):
    def __init__(self, pool_size=3):
        super().__init__()
        self.pool = nn.AvgPool2d(pool_size, 1, pool_size // 2, count_include_pad=False)

    def forward(self, x):
        return self.pool(x) - x


class PoolFormerBlock(nn.Module):
    def __init__(self, dim, mlp_ratio=4.0, drop_path=0.0, layer_scale_init=1e-5):
        super().__init__()
        self.norm1 = nn.GroupNorm(1, dim)
        self.mixer = Pooling()
        self.norm2 = nn.GroupNorm(1, dim)
        hidden = int(dim * mlp_ratio)
        self.mlp = nn.Sequential(nn.Conv2d(dim, hidden, 1), nn.GELU(), nn.Conv2d(hidden, dim, 1))
        self.ls1 = nn.Parameter(layer_scale_init * torch.ones(dim, 1, 1))
        self.ls2 = nn.Parameter(layer_scale_init * torch.ones(dim, 1, 1))
        self.drop_path = DropPath(drop_path)

    def forward(self, x):
        x = x + self.drop_path(self.ls1 * self.mixer(self.norm1(x)))
        return x + self.drop_path(self.ls2 * self.mlp(self.norm2(x)))


class PoolFormer(nn.Module):
    def __init__(self, depths, dims, num_classes=1000, drop_path_rate=0.0, layer_scale_init=1e-5,
                 grad_checkpointing=False):
        super().__init__()
        self.grad_checkpointing = grad_checkpointing
        self.stem = nn.Conv2d(3, dims[0], 7, 4, 2)
        dpr = torch.linspace(0, drop_path_rate, sum(depths)).tolist()
        self.stages, self.downs = nn.ModuleList(), nn.ModuleList()
        k = 0
        for i, (d, dim) in enumerate(zip(depths, dims)):
            self.stages.append(nn.ModuleList(
                [PoolFormerBlock(dim, drop_path=dpr[k + j], layer_scale_init=layer_scale_init) for j in range(d)]))
            k += d
            self.downs.append(nn.Conv2d(dim, dims[i + 1], 3, 2, 1) if i + 1 < len(dims) else nn.Identity())
        self.norm = nn.GroupNorm(1, dims[-1])
        self.head = nn.Linear(dims[-1], num_classes)

    def forward(self, x):
        x = self.stem(x)
        for blocks, down in zip(self.stages, self.downs):
            for blk in blocks:
                if self.grad_checkpointing and self.training:
                    x = checkpoint(blk, x, use_reentrant=False)
                else:
                    x = blk(x)
            x = down(x)
        return self.head(self.norm(x).mean((-2, -1)))


# ---- factory: create_model(name, **kwargs) -> _create(variant, **kwargs) -> PoolFormer(**arch, **kwargs)
def _create(variant, **kwargs):
    arch = dict(VARIANTS[variant])
    arch.update(kwargs)
    return PoolFormer(**arch)


def _build_from_registry(name, **kwargs):
    if name not in VARIANTS:
        raise KeyError(f"unknown model {name}; choose from {sorted(VARIANTS)}")
    return _create(name, **kwargs)


def create_model(name, pretrained=False, **kwargs):
    assert not pretrained, "no pretrained weights offline"
    return _build_from_registry(name, **kwargs)


class Synthetic(Dataset):
    def __init__(self, n, size, num_classes):
        self.n, self.size, self.num_classes = n, size, num_classes

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.rand(3, self.size, self.size), torch.randint(self.num_classes, ()).item()


def main(cfg: Config = Config()):
    device = "cuda"
    m = cfg.model
    model = create_model(m.variant, num_classes=m.num_classes, drop_path_rate=m.drop_path_rate,
                         layer_scale_init=m.layer_scale_init, grad_checkpointing=m.grad_checkpointing).to(device)
    print(f"{m.variant}: {sum(p.numel() for p in model.parameters()) / 1e6:.1f}M params")
    mean = torch.tensor(cfg.data.mean, device=device).view(1, 3, 1, 1)
    std = torch.tensor(cfg.data.std, device=device).view(1, 3, 1, 1)
    loader = DataLoader(Synthetic(cfg.data.batch_size * cfg.optim.steps, cfg.data.image_size, m.num_classes),
                        batch_size=cfg.data.batch_size, shuffle=True, num_workers=4, drop_last=True)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.optim.lr, betas=cfg.optim.betas,
                            weight_decay=cfg.optim.weight_decay)
    scaler = torch.amp.GradScaler("cuda")
    model.train()
    for step, (x, y) in enumerate(loader):
        x = (x.to(device) - mean) / std
        y = y.to(device)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.cross_entropy(model(x), y, label_smoothing=0.1)
        opt.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        scaler.step(opt)
        scaler.update()
        print(f"step {step} loss {loss.item():.4f} scale {scaler.get_scale():.0f}")
    print("max alloc GiB", torch.cuda.max_memory_allocated() / 2**30)


if __name__ == "__main__":
    main(Config(data=DataCfg(batch_size=192)))
