"""Batch scoring of an image archive with a torchvision classifier in half precision.

    python infer_effnetv2_half_inference_mode.py --arch efficientnet_v2_m --img 416 --bs 160
"""
import argparse
import time

import torch
import torchvision
from torch.utils.data import DataLoader, Dataset


class Archive(Dataset):
    def __init__(self, n, img):
        self.n = n
        self.img = img

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        x = torch.rand(3, self.img, self.img)
        mean = torch.tensor([0.485, 0.456, 0.406]).view(3, 1, 1)
        std = torch.tensor([0.229, 0.224, 0.225]).view(3, 1, 1)
        return (x - mean) / std, i


def parse():
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", default="efficientnet_v2_m")
    ap.add_argument("--img", type=int, default=416)
    ap.add_argument("--bs", type=int, default=160)
    ap.add_argument("--num-images", type=int, default=160 * 6)
    ap.add_argument("--workers", type=int, default=6)
    args, unknown = ap.parse_known_args()
    if unknown:
        print("ignoring", unknown)
    return args


def main():
    args = parse()
    model = torchvision.models.get_model(args.arch, weights=None, num_classes=1000)
    model = model.cuda().half().eval()
    loader = DataLoader(Archive(args.num_images, args.img), batch_size=args.bs, num_workers=args.workers)

    top5_all, ids_all = [], []
    t0 = time.time()
    with torch.inference_mode():
        for x, ids in loader:
            x = x.cuda(non_blocking=True).half()
            logits = model(x)
            top5 = logits.float().softmax(-1).topk(5, dim=-1)
            top5_all.append(top5.indices.cpu())
            ids_all.append(ids)
    n = sum(len(i) for i in ids_all)
    print(f"{n} images in {time.time() - t0:.1f}s; peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
