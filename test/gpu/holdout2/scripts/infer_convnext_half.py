#!/usr/bin/env python
"""Offline batch inference with a torchvision ConvNeXt in pure fp16 (weights cast with .half())."""
import argparse
import time

import torch
from torch.utils.data import DataLoader, Dataset
from torchvision import models

parser = argparse.ArgumentParser()
parser.add_argument("--arch", default="convnext_base")
parser.add_argument("--weights-enum", default="ConvNeXt_Base_Weights", help="only used for its preprocessing preset")
parser.add_argument("--batch-size", type=int, default=384)
parser.add_argument("--num-images", type=int, default=384 * 5)
parser.add_argument("--workers", type=int, default=6)
args = parser.parse_args()

# The preset of the ImageNet weights: resize 232 -> center crop 224 -> normalize.
# (we don't load the weights themselves here, only the preprocessing recipe)
preprocess = getattr(models, args.weights_enum).IMAGENET1K_V1.transforms()
print(preprocess)


class JpegLike(Dataset):
    """Variable-size decoded images, as read from disk."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        h, w = 300 + (i % 7) * 20, 400 - (i % 5) * 20
        img = torch.randint(0, 256, (3, h, w), dtype=torch.uint8)
        return preprocess(img), i


loader = DataLoader(JpegLike(args.num_images), batch_size=args.batch_size, num_workers=args.workers)

model = models.get_model(args.arch, weights=None)
model = model.half().cuda().eval()

predictions = []
t0 = time.time()
with torch.no_grad():
    for images, idx in loader:
        images = images.cuda(non_blocking=True).half()
        logits = model(images)
        top5 = logits.topk(5, dim=1).indices
        predictions.append(top5.cpu())
torch.cuda.synchronize()
preds = torch.cat(predictions)
print(f"{preds.shape[0]} images in {time.time() - t0:.1f}s, first: {preds[0].tolist()}")
