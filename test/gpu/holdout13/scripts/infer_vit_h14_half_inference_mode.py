"""Batch scoring of an image archive with torchvision ViT-H/14 in fp16 (model.half(), inference_mode)."""
import torch
from torch.utils.data import DataLoader, Dataset
from torchvision.models import vit_h_14


class Archive(Dataset):
    def __init__(self, n, size):
        self.n, self.size = n, size

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.randn(3, self.size, self.size), i


def main(batch_size=256, n_batches=6, image_size=224, topk=5):
    model = vit_h_14(weights=None, image_size=image_size)
    model = model.half().cuda().eval()
    print(f"ViT-H/14: {sum(p.numel() for p in model.parameters()) / 1e6:.0f}M params")

    loader = DataLoader(Archive(batch_size * n_batches, image_size), batch_size=batch_size, num_workers=4,
                        pin_memory=True)
    all_ids, all_top = [], []
    with torch.inference_mode():
        for images, ids in loader:
            images = images.cuda(non_blocking=True).half()
            logits = model(images)
            top = logits.float().softmax(-1).topk(topk, dim=-1)
            all_top.append(top.indices.cpu())
            all_ids.append(ids)
    top = torch.cat(all_top)
    print("scored", top.shape[0], "images; first:", top[0].tolist())
    print(f"peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
