"""Batch inference with torchvision's RetinaNet (ResNet-50 FPN) in eval mode under torch.no_grad(): images of
600x900 are resized by the model's transform (min_size=800 -> 800x1200), detections moved to the CPU."""
import torch
from torch.utils.data import DataLoader, Dataset
from torchvision.models.detection import retinanet_resnet50_fpn

BATCH = 16
H, W = 600, 900
NUM_IMAGES = 64
SCORE_THRESH = 0.3


class Frames(Dataset):
    def __len__(self):
        return NUM_IMAGES

    def __getitem__(self, i):
        return torch.rand(3, H, W)


def collate(batch):
    return list(batch)


detector = retinanet_resnet50_fpn(weights=None, weights_backbone=None, num_classes=91)
detector.eval().cuda()

results = []
with torch.no_grad():
    for images in DataLoader(Frames(), batch_size=BATCH, collate_fn=collate, num_workers=2):
        images = [im.cuda(non_blocking=True) for im in images]
        detections = detector(images)
        for det in detections:
            keep = det["scores"] > SCORE_THRESH
            results.append({k: v[keep].cpu() for k, v in det.items()})

print(len(results), "images;", sum(len(r["boxes"]) for r in results), "boxes")
print("peak %.2f GiB" % (torch.cuda.max_memory_allocated() / 2**30))
