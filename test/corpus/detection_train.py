"""Faster R-CNN (ResNet-50 FPN) fine-tuning on a COCO-format pedestrian dataset."""
import argparse
import math
import sys
import time

import torch
import torchvision
from torchvision.models.detection import fasterrcnn_resnet50_fpn_v2
from torchvision.models.detection.faster_rcnn import FastRCNNPredictor
from torchvision.transforms import v2 as T
from torchvision import tv_tensors

from coco_utils import CocoDetectionV2, collate_fn  # project helper


def get_transform(train):
    transforms = [T.ToImage()]
    if train:
        transforms.append(T.RandomHorizontalFlip(0.5))
    transforms += [T.ToDtype(torch.float, scale=True), T.ToPureTensor()]
    return T.Compose(transforms)


def train_one_epoch(model, optimizer, data_loader, device, epoch, print_freq=20):
    model.train()
    lr_scheduler = None
    if epoch == 0:
        warmup_factor = 1.0 / 1000
        warmup_iters = min(1000, len(data_loader) - 1)
        lr_scheduler = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=warmup_factor,
                                                         total_iters=warmup_iters)
    epoch_loss_sum = 0
    t0 = time.time()
    for it, (images, targets) in enumerate(data_loader):
        images = [img.to(device) for img in images]
        targets = [{k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in t.items()} for t in targets]

        loss_dict = model(images, targets)
        losses = sum(loss for loss in loss_dict.values())
        loss_value = losses.item()
        if not math.isfinite(loss_value):
            print(f"Loss is {loss_value}, stopping training")
            print({k: v.item() for k, v in loss_dict.items()})
            sys.exit(1)

        losses.backward()
        optimizer.step()  # expect: OOM103
        if lr_scheduler is not None:
            lr_scheduler.step()

        epoch_loss_sum += losses  # expect: OOM102
        # images have very different sizes, the allocator fragments badly otherwise
        torch.cuda.empty_cache()  # expect: OOM106

        if it % print_freq == 0:
            print(f"Epoch [{epoch}] [{it}/{len(data_loader)}] loss {loss_value:.4f} "
                  + " ".join(f"{k} {v.item():.3f}" for k, v in loss_dict.items())
                  + f" ({time.time() - t0:.0f}s)")
    return epoch_loss_sum.item() / len(data_loader)


@torch.inference_mode()
def evaluate(model, data_loader, device, iou_thresh=0.5):
    model.eval()
    tp, n_pred, n_gt = 0, 0, 0
    for images, targets in data_loader:
        images = [img.to(device) for img in images]
        outputs = model(images)
        for out, tgt in zip(outputs, targets):
            keep = out["scores"] > 0.5
            boxes = out["boxes"][keep].cpu()
            gt = tgt["boxes"]
            n_pred += len(boxes)
            n_gt += len(gt)
            if len(boxes) and len(gt):
                iou = torchvision.ops.box_iou(boxes, gt)
                tp += int((iou.max(dim=1).values > iou_thresh).sum())
    precision = tp / max(1, n_pred)
    recall = tp / max(1, n_gt)
    return precision, recall


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="data/pedestrians")
    ap.add_argument("--epochs", type=int, default=12)
    ap.add_argument("--lr", type=float, default=0.02)
    args = ap.parse_args()

    device = torch.device("cuda")
    train_ds = CocoDetectionV2(f"{args.data}/train", f"{args.data}/train.json", transforms=get_transform(True))
    val_ds = CocoDetectionV2(f"{args.data}/val", f"{args.data}/val.json", transforms=get_transform(False))
    train_dl = torch.utils.data.DataLoader(train_ds, batch_size=4, shuffle=True, num_workers=4, collate_fn=collate_fn)
    val_dl = torch.utils.data.DataLoader(val_ds, batch_size=4, num_workers=4, collate_fn=collate_fn)

    model = fasterrcnn_resnet50_fpn_v2(weights="DEFAULT")
    in_features = model.roi_heads.box_predictor.cls_score.in_features
    model.roi_heads.box_predictor = FastRCNNPredictor(in_features, 2)
    model.to(device)

    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.SGD(params, lr=args.lr, momentum=0.9, weight_decay=1e-4)
    lr_scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[8, 11], gamma=0.1)

    for epoch in range(args.epochs):
        optimizer.zero_grad()
        mean_loss = train_one_epoch(model, optimizer, train_dl, device, epoch)
        lr_scheduler.step()
        p, r = evaluate(model, val_dl, device)
        print(f"epoch {epoch}: loss {mean_loss:.4f} P {p:.3f} R {r:.3f}")
        torch.save(model.state_dict(), f"frcnn_epoch{epoch}.pth")


if __name__ == "__main__":
    main()
