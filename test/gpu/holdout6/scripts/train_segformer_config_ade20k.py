"""SegFormer (MiT-B2 sized, built from a config in code) on ADE20K-shaped data: 150 classes, 512 x 512 crops."""
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from transformers import SegformerConfig, SegformerForSemanticSegmentation


@dataclass
class Cfg:
    num_labels: int = 150
    crop: int = 512
    batch_size: int = 8
    lr: float = 6e-5
    max_iters: int = 8
    depths: list = field(default_factory=lambda: [3, 4, 6, 3])
    hidden_sizes: list = field(default_factory=lambda: [64, 128, 320, 512])
    decoder_hidden_size: int = 768


class ADE(Dataset):
    def __init__(self, cfg, n):
        self.cfg, self.n = cfg, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        img = torch.randn(3, self.cfg.crop, self.cfg.crop)
        seg = torch.randint(0, self.cfg.num_labels, (self.cfg.crop, self.cfg.crop))
        seg[:16] = 255  # unlabeled border
        return img, seg


def main(cfg=Cfg()):
    config = SegformerConfig(
        num_labels=cfg.num_labels,
        depths=cfg.depths,
        hidden_sizes=cfg.hidden_sizes,
        num_attention_heads=[1, 2, 5, 8],
        decoder_hidden_size=cfg.decoder_hidden_size,
        semantic_loss_ignore_index=255,
    )
    model = SegformerForSemanticSegmentation(config).cuda()
    optimizer = torch.optim.AdamW([
        {"params": model.segformer.parameters(), "lr": cfg.lr},
        {"params": model.decode_head.parameters(), "lr": cfg.lr * 10},
    ], weight_decay=0.01)
    poly = torch.optim.lr_scheduler.PolynomialLR(optimizer, total_iters=cfg.max_iters, power=1.0)
    loader = DataLoader(ADE(cfg, cfg.batch_size * cfg.max_iters), batch_size=cfg.batch_size, shuffle=True,
                        num_workers=2)
    model.train()
    for it, (img, seg) in enumerate(loader):
        img, seg = img.cuda(), seg.cuda()
        out = model(pixel_values=img, labels=seg)   # logits are H/4 x W/4, upsampled inside for the loss
        optimizer.zero_grad()
        out.loss.backward()
        optimizer.step()
        poly.step()
        with torch.no_grad():
            up = F.interpolate(out.logits, size=seg.shape[-2:], mode="bilinear", align_corners=False)
            acc = (up.argmax(1) == seg).float().mean().item()
        print(f"iter {it} loss {out.loss.item():.4f} pixacc {acc:.3f}")


if __name__ == "__main__":
    main()
