"""Batch inference with torchvision ViT-B/16 in fp16: score a pile of images as fast as possible."""
import time

import torch
from torch.utils.data import DataLoader, Dataset
from torchvision.models import vit_b_16

BATCH_SIZE = 1024
NUM_BATCHES = 4
IMAGE_SIZE = 224


class ImageFolderStub(Dataset):
    def __len__(self):
        return BATCH_SIZE * NUM_BATCHES

    def __getitem__(self, i):
        return torch.randn(3, IMAGE_SIZE, IMAGE_SIZE)


model = vit_b_16(weights=None)
model = model.half().cuda().eval()

loader = DataLoader(ImageFolderStub(), batch_size=BATCH_SIZE, num_workers=8, pin_memory=True)

top5 = []
t0 = time.time()
with torch.no_grad():
    for batch in loader:
        batch = batch.cuda(non_blocking=True).half()
        logits = model(batch)
        probs = logits.float().softmax(dim=-1)
        top5.append(probs.topk(5, dim=-1).indices.cpu())
torch.cuda.synchronize()
n = sum(t.shape[0] for t in top5)
print(f"{n} images in {time.time() - t0:.1f}s ({n / (time.time() - t0):.0f} img/s)")
