"""Score a large image set with DenseNet-161 under torch.inference_mode(), bf16 autocast, batches of 512."""
import os

import torch
from torch.utils.data import DataLoader, Dataset
from torchvision.models import densenet161

BATCH = int(os.environ.get("BATCH", "512"))
RES = 224


class Frames(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.rand(3, RES, RES)


def main():
    model = densenet161(weights=None).cuda().eval()
    mean = torch.tensor([0.485, 0.456, 0.406], device="cuda").view(1, 3, 1, 1)
    std = torch.tensor([0.229, 0.224, 0.225], device="cuda").view(1, 3, 1, 1)
    loader = DataLoader(Frames(BATCH * 5), batch_size=BATCH, num_workers=4, pin_memory=True)
    top5 = []
    with torch.inference_mode(), torch.autocast("cuda", dtype=torch.bfloat16):
        for batch in loader:
            x = (batch.cuda(non_blocking=True) - mean) / std
            probs = model(x).float().softmax(dim=-1)
            top5.append(probs.topk(5, dim=-1).indices.cpu())
    preds = torch.cat(top5)
    print(preds.shape, preds[:2])


if __name__ == "__main__":
    main()
