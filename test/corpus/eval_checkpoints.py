#!/usr/bin/env python3
"""Evaluate every checkpoint of a segmentation run and write a leaderboard.

    python eval_checkpoints.py --run runs/deeplab_2024_05 --split val --tta

What it does, per checkpoint:
  1. plain evaluation (mIoU, pixel accuracy, loss)           -> evaluate()
  2. optional flip / multi-scale TTA                         -> validate_tta()
  3. temperature scaling on the val set (needs gradients!)   -> fit_temperature()
  4. per-image confidence dump for the active-learning queue -> export_confidences()
"""
import argparse
import glob
import json
import logging
import os
import re
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from torchvision import transforms
from torchvision.models.segmentation import deeplabv3_resnet50

# the eval box has 2 GPUs; GPU 1 runs the training job
os.putenv("CUDA_VISIBLE_DEVICES", "0")  # expect: OOM105

log = logging.getLogger("eval_ckpts")

IGNORE_INDEX = 255
MEAN = [0.485, 0.456, 0.406]
STD = [0.229, 0.224, 0.225]


# --------------------------------------------------------------------------- data
class SegFolder(Dataset):
    """images/*.jpg + masks/*.png with the same stem."""

    def __init__(self, root, split, size=512):
        self.images = sorted(glob.glob(os.path.join(root, split, "images", "*.jpg")))
        self.masks = [p.replace("images", "masks").replace(".jpg", ".png") for p in self.images]
        self.size = size
        self.to_tensor = transforms.Compose([transforms.ToTensor(), transforms.Normalize(MEAN, STD)])

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        from PIL import Image
        img = Image.open(self.images[i]).convert("RGB").resize((self.size, self.size), Image.BILINEAR)
        mask = Image.open(self.masks[i]).resize((self.size, self.size), Image.NEAREST)
        return self.to_tensor(img), torch.from_numpy(np.array(mask, dtype=np.int64)), os.path.basename(self.images[i])


# --------------------------------------------------------------------------- metrics
@dataclass
class ConfusionMatrix:
    num_classes: int
    mat: torch.Tensor = field(default=None)

    def update(self, pred, target):
        n = self.num_classes
        if self.mat is None:
            self.mat = torch.zeros((n, n), dtype=torch.int64, device=pred.device)
        k = (target >= 0) & (target < n)
        inds = n * target[k].to(torch.int64) + pred[k]
        self.mat += torch.bincount(inds, minlength=n ** 2).reshape(n, n)

    def compute(self):
        h = self.mat.float()
        acc_global = torch.diag(h).sum() / h.sum()
        iu = torch.diag(h) / (h.sum(1) + h.sum(0) - torch.diag(h))
        return acc_global.item(), iu.nanmean().item(), iu.tolist()


def ckpt_step(path):
    m = re.search(r"step_(\d+)", path)
    return int(m.group(1)) if m else -1


def load_checkpoint(path, num_classes, device):
    model = deeplabv3_resnet50(weights=None, weights_backbone=None, num_classes=num_classes, aux_loss=True)
    state = torch.load(path, map_location="cpu")
    state = state.get("model", state)
    missing, unexpected = model.load_state_dict(state, strict=False)
    if missing:
        log.warning("missing keys: %s", missing[:5])
    return model.to(device)


# --------------------------------------------------------------------------- 1. plain evaluation
def evaluate(model, loader, num_classes, device):
    model.eval()
    cm = ConfusionMatrix(num_classes)
    total_loss = 0.0
    all_logits = []
    t0 = time.time()
    for i, (images, masks, _) in enumerate(loader):
        images = images.to(device, non_blocking=True)
        masks = masks.to(device, non_blocking=True)
        out = model(images)["out"]  # expect: OOM104
        loss = F.cross_entropy(out, masks, ignore_index=IGNORE_INDEX)
        total_loss += loss  # expect: OOM102
        cm.update(out.argmax(1).flatten(), masks.flatten())
        all_logits.append(out.to(torch.float16))  # expect: OOM101
        if i % 20 == 0:
            log.info("eval batch %d/%d (%.1fs)", i, len(loader), time.time() - t0)
            torch.cuda.empty_cache()  # expect: OOM106
    acc, miou, per_class = cm.compute()
    return {"loss": total_loss.item() / max(1, len(loader)), "acc": acc, "miou": miou,
            "per_class_iou": per_class}, all_logits


# --------------------------------------------------------------------------- 2. TTA
def validate_tta(model, loader, num_classes, device, scales=(0.75, 1.0, 1.25)):
    model.eval()
    cm = ConfusionMatrix(num_classes)
    with torch.no_grad():
        for images, masks, _ in loader:
            images, masks = images.to(device), masks.to(device)
            h, w = images.shape[-2:]
            probs = torch.zeros(images.size(0), num_classes, h, w, device=device)
            for s in scales:
                x = F.interpolate(images, scale_factor=s, mode="bilinear", align_corners=False)
                for flip in (False, True):
                    xi = torch.flip(x, dims=[3]) if flip else x
                    o = model(xi)["out"]
                    if flip:
                        o = torch.flip(o, dims=[3])
                    probs += F.interpolate(o, size=(h, w), mode="bilinear", align_corners=False).softmax(1)
            cm.update(probs.argmax(1).flatten(), masks.flatten())
    acc, miou, _ = cm.compute()
    return {"tta_acc": acc, "tta_miou": miou}


# --------------------------------------------------------------------------- 3. temperature scaling
class TemperatureScaler(nn.Module):
    def __init__(self):
        super().__init__()
        self.log_t = nn.Parameter(torch.zeros(1))

    def forward(self, logits):
        return logits / self.log_t.exp()


def collect_val_logits(model, loader, device, max_batches=20):
    model.eval()
    logits, labels = [], []
    with torch.no_grad():
        for i, (images, masks, _) in enumerate(loader):
            if i >= max_batches:
                break
            out = model(images.to(device))["out"]
            # subsample pixels so that LBFGS fits in memory
            idx = torch.randint(0, out.shape[-1] * out.shape[-2], (4096,), device=device)
            logits.append(out.flatten(2)[:, :, idx].permute(0, 2, 1).reshape(-1, out.size(1)))
            labels.append(masks.to(device).flatten(1)[:, idx].reshape(-1))
    return torch.cat(logits), torch.cat(labels)


def fit_temperature(model, loader, device):
    logits, labels = collect_val_logits(model, loader, device)
    scaler = TemperatureScaler().to(device)
    opt = torch.optim.LBFGS(scaler.parameters(), lr=0.05, max_iter=100)

    def closure():
        opt.zero_grad()
        loss = F.cross_entropy(scaler(logits), labels, ignore_index=IGNORE_INDEX)
        loss.backward()
        return loss

    opt.step(closure)
    return float(scaler.log_t.exp())


# --------------------------------------------------------------------------- 4. confidences for active learning
@torch.inference_mode()
def export_confidences(model, loader, device, out_path, temperature=1.0):
    model.eval()
    rows = []
    for images, _, names in loader:
        out = model(images.to(device))["out"] / temperature
        conf = out.softmax(1).max(1).values.mean(dim=(1, 2))
        rows.extend(zip(names, conf.tolist()))
    with open(out_path, "w") as f:
        for name, c in sorted(rows, key=lambda r: r[1]):
            f.write(f"{name}\t{c:.5f}\n")
    return len(rows)


# --------------------------------------------------------------------------- main
def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", required=True, help="run directory containing checkpoints/")
    ap.add_argument("--data", default="/data/segmentation")
    ap.add_argument("--split", default="val")
    ap.add_argument("--num-classes", type=int, default=21)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--workers", type=int, default=6)
    ap.add_argument("--tta", action="store_true")
    ap.add_argument("--calibrate", action="store_true")
    ap.add_argument("--export", action="store_true")
    ap.add_argument("--keep-logits", action="store_true")
    ap.add_argument("--last", type=int, default=0, help="only evaluate the last N checkpoints")
    return ap.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    ds = SegFolder(args.data, args.split)
    loader = DataLoader(ds, batch_size=args.batch_size, num_workers=args.workers, pin_memory=True)
    log.info("%d images in %s/%s", len(ds), args.data, args.split)

    ckpts = sorted(glob.glob(os.path.join(args.run, "checkpoints", "*.pt")), key=ckpt_step)
    if args.last:
        ckpts = ckpts[-args.last:]
    if not ckpts:
        log.error("no checkpoints found under %s", args.run)
        return 1

    board = []
    per_class = defaultdict(list)
    for path in ckpts:
        t0 = time.time()
        model = load_checkpoint(path, args.num_classes, device)
        metrics, logits = evaluate(model, loader, args.num_classes, device)
        if args.keep_logits:
            torch.save([l.detach().cpu() for l in logits], path.replace(".pt", ".logits.pt"))
        del logits
        if args.tta:
            metrics.update(validate_tta(model, loader, args.num_classes, device))
        if args.calibrate:
            metrics["temperature"] = fit_temperature(model, loader, device)
        if args.export:
            n = export_confidences(model, loader, device, path.replace(".pt", ".conf.tsv"),
                                   temperature=metrics.get("temperature", 1.0))
            metrics["exported"] = n
        metrics["checkpoint"] = os.path.basename(path)
        metrics["step"] = ckpt_step(path)
        metrics["seconds"] = round(time.time() - t0, 1)
        for c, iou in enumerate(metrics.pop("per_class_iou")):
            per_class[c].append(iou)
        board.append(metrics)
        log.info("%s: mIoU %.4f acc %.4f", metrics["checkpoint"], metrics["miou"], metrics["acc"])

        del model
        # one checkpoint at a time; give the memory back before loading the next one
        torch.cuda.empty_cache()

    board.sort(key=lambda m: m.get("tta_miou", m["miou"]), reverse=True)
    out = os.path.join(args.run, f"leaderboard_{args.split}.json")
    with open(out, "w") as f:
        json.dump({"board": board, "per_class_iou": per_class}, f, indent=2)
    log.info("best: %s (mIoU %.4f) -> %s", board[0]["checkpoint"], board[0]["miou"], out)

    print("\n%-32s %8s %8s %8s" % ("checkpoint", "mIoU", "acc", "loss"))
    for m in board:
        print("%-32s %8.4f %8.4f %8.4f" % (m["checkpoint"], m["miou"], m["acc"], m["loss"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
