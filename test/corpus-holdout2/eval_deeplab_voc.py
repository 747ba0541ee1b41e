"""Evaluate a trained DeepLabV3 checkpoint on Pascal VOC val (mIoU), saving raw logits for later ensembling.

python eval_deeplab_voc.py --ckpt runs/deeplab/best.pth
"""
import argparse

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision.datasets import VOCSegmentation
from torchvision.models.segmentation import deeplabv3_resnet50
import torchvision.transforms.v2 as T


def evaluate(model, loader, num_classes=21):
    model.eval()
    conf = torch.zeros(num_classes, num_classes, dtype=torch.long, device="cuda")
    total_loss = 0.0
    all_logits = []
    for images, masks in loader:
        images = images.cuda(non_blocking=True)
        masks = masks.squeeze(1).long().cuda(non_blocking=True)
        with torch.autocast("cuda", dtype=torch.float16):
            logits = model(images)["out"]  # expect: OOM104
            loss = F.cross_entropy(logits, masks, ignore_index=255)
        total_loss += loss  # expect: OOM102
        all_logits.append(logits.cpu())  # expect: OOM101

        preds = logits.argmax(1)
        valid = masks != 255
        conf += torch.bincount(
            masks[valid] * num_classes + preds[valid], minlength=num_classes ** 2
        ).view(num_classes, num_classes)

    iou = conf.diag().float() / (conf.sum(0) + conf.sum(1) - conf.diag()).float().clamp(min=1)
    return iou.mean().item(), (total_loss / len(loader)).item(), all_logits


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", required=True)
    ap.add_argument("--root", default="data/voc")
    ap.add_argument("--save_logits", default="")
    args = ap.parse_args()

    tf = T.Compose([T.Resize((512, 512), antialias=True), T.ToImage(), T.ToDtype(torch.float32, scale=True),
                    T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
    val_set = VOCSegmentation(args.root, year="2012", image_set="val", transforms=tf)
    loader = DataLoader(val_set, batch_size=8, num_workers=4)

    model = deeplabv3_resnet50(weights=None, num_classes=21, aux_loss=True)
    model.load_state_dict(torch.load(args.ckpt)["model"])
    model = model.cuda()

    miou, loss, logits = evaluate(model, loader)
    print(f"mIoU {miou * 100:.2f}  val loss {loss:.4f}")
    if args.save_logits:
        torch.save(torch.cat(logits), args.save_logits)


if __name__ == "__main__":
    main()
