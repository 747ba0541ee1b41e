"""Batch segmentation inference with DeepLabV3-MobileNetV3-Large in fp16.

Predicts a mask for each tile of a folder (random tensors here) at 520x520, 64 tiles per batch,
under torch.no_grad(), and keeps only the argmax masks on the CPU.
"""
import torch
from torch.utils.data import DataLoader, Dataset
from torchvision.models.segmentation import deeplabv3_mobilenet_v3_large

BATCH = 64
SIZE = 520
N_TILES = 320
NUM_CLASSES = 21


class Tiles(Dataset):
    def __init__(self, n):
        self.n = n
        self.mean = torch.tensor([0.485, 0.456, 0.406]).view(3, 1, 1)
        self.std = torch.tensor([0.229, 0.224, 0.225]).view(3, 1, 1)

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        img = torch.rand(3, SIZE, SIZE)
        return (img - self.mean) / self.std


model = deeplabv3_mobilenet_v3_large(weights=None, weights_backbone=None, num_classes=NUM_CLASSES, aux_loss=False)
model = model.eval().cuda().half()

masks = []
with torch.no_grad():
    for batch in DataLoader(Tiles(N_TILES), batch_size=BATCH, num_workers=4):
        out = model(batch.cuda().half())["out"]
        masks.append(out.argmax(1).to(torch.uint8).cpu())
masks = torch.cat(masks)
print(masks.shape, torch.bincount(masks.flatten().long(), minlength=NUM_CLASSES)[:5])
