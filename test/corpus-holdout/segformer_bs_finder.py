"""SegFormer-B2 on ADE20K with an automatic batch-size finder (largest power of two that fits).

Multi-GPU eval uses the functional nn.parallel.data_parallel; training stays single-GPU.
"""
import argparse
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from transformers import SegformerForSemanticSegmentation

from ade_data import ADE20K  # local module: returns (image, mask) with 255 = ignore

visible = os.environ.get("CUDA_VISIBLE_DEVICES", "")
DEVICE_IDS = list(range(len(visible.split(",")))) if visible else [0]


def seg_loss(logits, mask):
    logits = F.interpolate(logits, size=mask.shape[-2:], mode="bilinear", align_corners=False)
    return F.cross_entropy(logits, mask, ignore_index=255)


def find_batch_size(model, opt, sample, start=64):
    """Halve the batch until one full training step fits; this loop is a retry loop, not a batch loop."""
    bs = start
    x0, m0 = sample
    while bs >= 1:
        try:
            x = x0[:1].repeat(bs, 1, 1, 1).cuda()
            m = m0[:1].repeat(bs, 1, 1).cuda()
            loss = seg_loss(model(pixel_values=x).logits, m)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            return bs
        except torch.cuda.OutOfMemoryError:
            opt.zero_grad(set_to_none=True)
            bs //= 2
            torch.cuda.empty_cache()
    raise RuntimeError("even batch size 1 does not fit")


@torch.inference_mode()
def evaluate(model, loader, n_classes=150):
    model.eval()
    inter = torch.zeros(n_classes, device="cuda")
    union = torch.zeros(n_classes, device="cuda")
    for x, m in loader:
        x, m = x.cuda(), m.cuda()
        logits = nn.parallel.data_parallel(model, x, device_ids=DEVICE_IDS, module_kwargs=None).logits \
            if len(DEVICE_IDS) > 1 else model(pixel_values=x).logits
        pred = F.interpolate(logits, size=m.shape[-2:], mode="bilinear").argmax(1)
        valid = m != 255
        for c in range(n_classes):
            p, g = (pred == c) & valid, (m == c) & valid
            inter[c] += (p & g).sum()
            union[c] += (p | g).sum()
    model.train()
    return (inter / union.clamp(min=1)).mean().item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=60)
    ap.add_argument("--lr", type=float, default=6e-5)
    args = ap.parse_args()

    model = SegformerForSemanticSegmentation.from_pretrained("nvidia/mit-b2", num_labels=150).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    train_set, val_set = ADE20K("data/ade", "training"), ADE20K("data/ade", "validation")
    bs = find_batch_size(model, opt, train_set[0])
    print(f"using batch size {bs}")
    train_dl = DataLoader(train_set, bs, shuffle=True, num_workers=8, drop_last=True, pin_memory=True)
    val_dl = DataLoader(val_set, 1, num_workers=4)
    sched = torch.optim.lr_scheduler.PolynomialLR(opt, total_iters=args.epochs * len(train_dl), power=1.0)

    for epoch in range(args.epochs):
        model.train()
        seen, loss_sum = 0, torch.zeros((), device="cuda")
        for x, m in train_dl:
            x, m = x.cuda(non_blocking=True), m.cuda(non_blocking=True)
            loss = seg_loss(model(pixel_values=x).logits, m)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
            loss_sum += loss.detach() * x.size(0)
            seen += x.size(0)
        miou = evaluate(model, val_dl) if epoch % 5 == 4 else float("nan")
        print(f"epoch {epoch}: loss {loss_sum.item() / seen:.4f} mIoU {miou:.4f}")
        torch.cuda.empty_cache()  # once per epoch: evaluation at full resolution fragments the allocator
        torch.save(model.state_dict(), "segformer_b2_ade.pt")


if __name__ == "__main__":
    main()
