"""Batch inference: score a folder of images with a ViT-L/16 classifier (bf16 autocast, no_grad)."""
import argparse
import os

import torch
import torchvision
from torch.utils.data import DataLoader, Dataset

parser = argparse.ArgumentParser()
parser.add_argument("--arch", default="vit_l_16")
parser.add_argument("--ckpt", default="checkpoints/vit_l_16_finetuned.pt")
parser.add_argument("--batch-size", type=int, default=256, dest="bs")
parser.add_argument("--image-size", type=int, default=224, dest="image_size")
parser.add_argument("--num-batches", type=int, default=6)
args = parser.parse_args()


class ImageFiles(Dataset):
    def __init__(self, n, size):
        self.n, self.size = n, size

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.randn(3, self.size, self.size), i


model = getattr(torchvision.models, args.arch)(weights=None)
if os.path.exists(args.ckpt):
    model.load_state_dict(torch.load(args.ckpt, map_location="cpu"))
model = model.cuda().eval()

loader = DataLoader(ImageFiles(args.bs * args.num_batches, args.image_size), batch_size=args.bs)
top5_all, ids_all = [], []
with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
    for images, ids in loader:
        logits = model(images.cuda(non_blocking=True))
        top5 = logits.float().softmax(-1).topk(5, dim=-1).indices
        top5_all.append(top5.cpu())
        ids_all.append(ids)

preds = torch.cat(top5_all)
print("scored", preds.shape[0], "images; first:", preds[0].tolist())
