"""Offline batch scoring of an image dump with torchvision ViT-L/16 under bf16 autocast (no training)."""
import argparse
import time

import torch
import torchvision
from torch.utils.data import DataLoader, Dataset


def get_parser():
    parser = argparse.ArgumentParser(description="batch inference")
    parser.add_argument("--arch", type=str)
    parser.add_argument("--batch-size", type=int, dest="batch_size")
    parser.add_argument("--num-batches", type=int)
    parser.add_argument("--image-size", type=int)
    parser.add_argument("--topk", type=int)
    parser.set_defaults(arch="vit_l_16", batch_size=256, num_batches=8, image_size=224, topk=5)
    return parser


class ImageDump(Dataset):
    def __init__(self, n, size):
        self.n, self.size = n, size

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.rand(3, self.size, self.size), i


@torch.inference_mode()
def run(model, loader, topk):
    results_idx, results_p = [], []
    for images, ids in loader:
        images = images.cuda(non_blocking=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(images)
        probs = logits.float().softmax(dim=-1)
        p, idx = probs.topk(topk, dim=-1)
        results_idx.append(idx.cpu())
        results_p.append(p.cpu())
    return torch.cat(results_idx), torch.cat(results_p)


def main():
    args = get_parser().parse_args()
    model = torchvision.models.get_model(args.arch, weights=None)
    model = model.cuda().eval()
    loader = DataLoader(ImageDump(args.batch_size * args.num_batches, args.image_size),
                        batch_size=args.batch_size, num_workers=6, pin_memory=True)
    t0 = time.time()
    idx, p = run(model, loader, args.topk)
    torch.cuda.synchronize()
    dt = time.time() - t0
    print(f"{len(idx)} images in {dt:.1f}s ({len(idx) / dt:.0f} img/s); top-1 mean p {p[:, 0].mean():.4f}")
    print(f"peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
