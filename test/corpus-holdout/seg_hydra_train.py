"""Semantic segmentation training (DeepLabV3 / FCN) driven by a Hydra config.

    python seg_hydra_train.py model.arch=deeplabv3_resnet50 train.epochs=80 hardware.gpus=\"0,1\"

The structured config below doubles as documentation of every knob.
"""
from __future__ import annotations

import logging
import math
import os
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional

import hydra
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from hydra.core.config_store import ConfigStore
from omegaconf import DictConfig, OmegaConf
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from torch.utils.tensorboard import SummaryWriter
from torchvision.models import segmentation as segm

log = logging.getLogger(__name__)


# --------------------------------------------------------------------------- config
@dataclass
class DataCfg:
    root: str = "/data/cityscapes_lite"
    num_classes: int = 19
    ignore_index: int = 255
    crop: int = 512
    workers: int = 8


@dataclass
class ModelCfg:
    arch: str = "deeplabv3_resnet50"
    pretrained_backbone: bool = True
    aux_loss: bool = True


@dataclass
class TrainCfg:
    epochs: int = 80
    batch_size: int = 8
    lr: float = 0.01
    momentum: float = 0.9
    weight_decay: float = 1e-4
    poly_power: float = 0.9
    amp: bool = True
    clip: float = 5.0
    dice_weight: float = 0.5
    empty_cache_every: int = 50
    log_every: int = 20
    seed: int = 3407


@dataclass
class HardwareCfg:
    gpus: str = "0"
    data_parallel: bool = True


@dataclass
class SegConfig:
    data: DataCfg = field(default_factory=DataCfg)
    model: ModelCfg = field(default_factory=ModelCfg)
    train: TrainCfg = field(default_factory=TrainCfg)
    hardware: HardwareCfg = field(default_factory=HardwareCfg)
    out_dir: str = "outputs/seg"
    resume: Optional[str] = None


cs = ConfigStore.instance()
cs.store(name="seg", node=SegConfig)


# --------------------------------------------------------------------------- data
class SegFolder(Dataset):
    """images/<split>/*.png + masks/<split>/*.png with identical stems."""

    MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)
    STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)

    def __init__(self, root: str, split: str, crop: int, train: bool):
        self.img_dir = Path(root) / "images" / split
        self.mask_dir = Path(root) / "masks" / split
        self.items = sorted(p.stem for p in self.img_dir.glob("*.png"))
        self.crop = crop
        self.train = train

    def __len__(self):
        return len(self.items)

    def _random_crop(self, img: np.ndarray, mask: np.ndarray):
        h, w = mask.shape
        top = random.randint(0, max(0, h - self.crop))
        left = random.randint(0, max(0, w - self.crop))
        return (img[top:top + self.crop, left:left + self.crop],
                mask[top:top + self.crop, left:left + self.crop])

    def __getitem__(self, idx):
        stem = self.items[idx]
        img = np.asarray(Image.open(self.img_dir / f"{stem}.png").convert("RGB"), dtype=np.float32) / 255.0
        mask = np.asarray(Image.open(self.mask_dir / f"{stem}.png"), dtype=np.int64)
        if self.train:
            img, mask = self._random_crop(img, mask)
            if random.random() < 0.5:
                img, mask = img[:, ::-1], mask[:, ::-1]
        img = (img - self.MEAN) / self.STD
        img = torch.from_numpy(np.ascontiguousarray(img.transpose(2, 0, 1)))
        mask = torch.from_numpy(np.ascontiguousarray(mask))
        return img, mask


def make_loaders(cfg: DictConfig):
    train_ds = SegFolder(cfg.data.root, "train", cfg.data.crop, train=True)
    val_ds = SegFolder(cfg.data.root, "val", cfg.data.crop, train=False)
    train_dl = DataLoader(train_ds, batch_size=cfg.train.batch_size, shuffle=True,
                          num_workers=cfg.data.workers, pin_memory=True, drop_last=True,
                          persistent_workers=True)
    val_dl = DataLoader(val_ds, batch_size=1, shuffle=False, num_workers=2, pin_memory=True)
    return train_dl, val_dl


# --------------------------------------------------------------------------- model / loss
def build_model(cfg: DictConfig) -> nn.Module:
    ctor = getattr(segm, cfg.model.arch)
    weights_backbone = "IMAGENET1K_V1" if cfg.model.pretrained_backbone else None
    return ctor(weights=None, weights_backbone=weights_backbone,
                num_classes=cfg.data.num_classes, aux_loss=cfg.model.aux_loss)


class DiceCE(nn.Module):
    def __init__(self, num_classes: int, ignore_index: int, dice_weight: float):
        super().__init__()
        self.num_classes = num_classes
        self.ignore_index = ignore_index
        self.dice_weight = dice_weight
        self.ce = nn.CrossEntropyLoss(ignore_index=ignore_index)

    def soft_dice(self, logits, target):
        valid = (target != self.ignore_index)
        probs = logits.softmax(dim=1)
        tgt = target.clone()
        tgt[~valid] = 0
        onehot = F.one_hot(tgt, self.num_classes).permute(0, 3, 1, 2).float()
        valid = valid.unsqueeze(1)
        per_class = []
        for c in range(self.num_classes):
            p = probs[:, c:c + 1] * valid
            g = onehot[:, c:c + 1] * valid
            inter = (p * g).sum()
            denom = p.sum() + g.sum()
            per_class.append(1 - (2 * inter + 1) / (denom + 1))
        return torch.stack(per_class).mean()

    def forward(self, out, target):
        logits = out["out"]
        loss = self.ce(logits, target) + self.dice_weight * self.soft_dice(logits, target)
        if "aux" in out:
            loss = loss + 0.4 * self.ce(out["aux"], target)
        return loss


def poly_lambda(total_iters: int, power: float):
    return lambda it: (1 - it / max(1, total_iters)) ** power


class AverageMeter:
    def __init__(self):
        self.sum, self.count = 0.0, 0

    def update(self, val: float, n: int = 1):
        self.sum += val * n
        self.count += n

    @property
    def avg(self):
        return self.sum / max(1, self.count)


# --------------------------------------------------------------------------- metrics
class ConfusionMatrix:
    def __init__(self, num_classes: int, ignore_index: int, device):
        self.n = num_classes
        self.ignore = ignore_index
        self.mat = torch.zeros(num_classes, num_classes, dtype=torch.int64, device=device)

    def update(self, pred: torch.Tensor, target: torch.Tensor):
        k = target != self.ignore
        inds = self.n * target[k] + pred[k]
        self.mat += torch.bincount(inds, minlength=self.n ** 2).reshape(self.n, self.n)

    def miou(self):
        h = self.mat.double()
        iou = torch.diag(h) / (h.sum(0) + h.sum(1) - torch.diag(h)).clamp(min=1)
        return iou.mean().item(), iou.tolist()


# --------------------------------------------------------------------------- loops
def train_epoch(cfg, model, loader, criterion, optimizer, scaler, scheduler, writer, epoch, device):
    model.train()
    optimizer.zero_grad(set_to_none=True)
    meter = AverageMeter()
    n_steps = len(loader)
    for step, (img, mask) in enumerate(loader):
        img = img.to(device, non_blocking=True)
        mask = mask.to(device, non_blocking=True)
        with torch.autocast("cuda", dtype=torch.float16, enabled=cfg.train.amp):
            out = model(img)
            loss = criterion(out, mask)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        nn.utils.clip_grad_norm_(model.parameters(), cfg.train.clip)
        scaler.step(optimizer)  # expect: OOM103
        scaler.update()
        scheduler.step()

        meter.update(loss.item(), img.size(0))
        global_step = epoch * n_steps + step
        if step % cfg.train.log_every == 0:
            writer.add_scalar("train/loss", meter.avg, global_step)
            writer.add_scalar("train/lr", scheduler.get_last_lr()[0], global_step)
            log.info("ep %d it %d/%d loss %.4f", epoch, step, n_steps, meter.avg)
        if step % cfg.train.empty_cache_every == 0:
            torch.cuda.empty_cache()  # expect: OOM106
    return meter.avg


@torch.inference_mode()
def sliding_window(model, img, crop: int, num_classes: int, stride_ratio: float = 2 / 3):
    _, _, h, w = img.shape
    stride = int(crop * stride_ratio)
    logits = torch.zeros(1, num_classes, h, w, device=img.device)
    counts = torch.zeros(1, 1, h, w, device=img.device)
    ys = list(range(0, max(h - crop, 0) + 1, stride))
    xs = list(range(0, max(w - crop, 0) + 1, stride))
    if ys[-1] + crop < h:
        ys.append(h - crop)
    if xs[-1] + crop < w:
        xs.append(w - crop)
    for y0 in ys:
        for x0 in xs:
            patch = img[:, :, y0:y0 + crop, x0:x0 + crop]
            logits[:, :, y0:y0 + crop, x0:x0 + crop] += model(patch)["out"]
            counts[:, :, y0:y0 + crop, x0:x0 + crop] += 1
    return logits / counts


@torch.inference_mode()
def validate(cfg, model, loader, device):
    model.eval()
    cm = ConfusionMatrix(cfg.data.num_classes, cfg.data.ignore_index, device)
    for img, mask in loader:
        img = img.to(device, non_blocking=True)
        mask = mask.to(device, non_blocking=True)
        with torch.autocast("cuda", dtype=torch.float16, enabled=cfg.train.amp):
            logits = sliding_window(model, img, cfg.data.crop, cfg.data.num_classes)
        cm.update(logits.argmax(1), mask)
    return cm.miou()


# --------------------------------------------------------------------------- checkpoints
def unwrap(model: nn.Module) -> nn.Module:
    return model.module if isinstance(model, nn.DataParallel) else model


def save_checkpoint(path: Path, model, optimizer, scaler, epoch: int, best: float):
    torch.save({
        "model": unwrap(model).state_dict(),
        "optimizer": optimizer.state_dict(),
        "scaler": scaler.state_dict(),
        "epoch": epoch,
        "best_miou": best,
    }, path)


def load_checkpoint(path: str, model, optimizer, scaler):
    ckpt = torch.load(path, map_location="cpu")
    unwrap(model).load_state_dict(ckpt["model"])
    optimizer.load_state_dict(ckpt["optimizer"])
    scaler.load_state_dict(ckpt["scaler"])
    return ckpt["epoch"] + 1, ckpt.get("best_miou", 0.0)


def seed_everything(seed: int):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


# --------------------------------------------------------------------------- main
@hydra.main(config_path=None, config_name="seg", version_base=None)
def main(cfg: DictConfig) -> None:
    # the GPU list comes from the config, never hard-coded here
    os.environ["CUDA_VISIBLE_DEVICES"] = str(cfg.hardware.gpus)
    log.info("\n%s", OmegaConf.to_yaml(cfg))
    seed_everything(cfg.train.seed)
    out_dir = Path(cfg.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    device = torch.device("cuda")

    train_dl, val_dl = make_loaders(cfg)
    model = build_model(cfg).to(device)
    if cfg.hardware.data_parallel and torch.cuda.device_count() > 1:
        model = nn.DataParallel(model)  # expect: OOM108

    backbone_params = [p for n, p in unwrap(model).named_parameters() if n.startswith("backbone")]
    head_params = [p for n, p in unwrap(model).named_parameters() if not n.startswith("backbone")]
    optimizer = torch.optim.SGD([
        {"params": backbone_params, "lr": cfg.train.lr},
        {"params": head_params, "lr": cfg.train.lr * 10},
    ], momentum=cfg.train.momentum, weight_decay=cfg.train.weight_decay)
    total_iters = cfg.train.epochs * len(train_dl)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, poly_lambda(total_iters, cfg.train.poly_power))
    scaler = torch.amp.GradScaler("cuda", enabled=cfg.train.amp)
    criterion = DiceCE(cfg.data.num_classes, cfg.data.ignore_index, cfg.train.dice_weight)
    writer = SummaryWriter(log_dir=str(out_dir / "tb"))

    start_epoch, best = 0, 0.0
    if cfg.resume:
        start_epoch, best = load_checkpoint(cfg.resume, model, optimizer, scaler)
        log.info("resumed from %s at epoch %d", cfg.resume, start_epoch)

    for epoch in range(start_epoch, cfg.train.epochs):
        tr_loss = train_epoch(cfg, model, train_dl, criterion, optimizer, scaler,
                              scheduler, writer, epoch, device)
        miou, per_class = validate(cfg, model, val_dl, device)
        writer.add_scalar("val/mIoU", miou, epoch)
        for c, v in enumerate(per_class):
            writer.add_scalar(f"val_iou/class_{c}", v, epoch)
        log.info("epoch %d train_loss %.4f val_mIoU %.4f", epoch, tr_loss, miou)

        save_checkpoint(out_dir / "last.pt", model, optimizer, scaler, epoch, best)
        if miou > best:
            best = miou
            save_checkpoint(out_dir / "best.pt", model, optimizer, scaler, epoch, best)
        # once per epoch, after validation: hand fragmented blocks back before the next epoch
        torch.cuda.empty_cache()

    writer.close()
    log.info("best mIoU %.4f", best)


if __name__ == "__main__":
    main()
