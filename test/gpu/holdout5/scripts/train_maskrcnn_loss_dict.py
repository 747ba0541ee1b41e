"""Instance segmentation: torchvision Mask R-CNN (ResNet-50 FPN) in train mode on random images and boxes."""
import math

import torch
import torchvision
from torch.utils.data import DataLoader, Dataset

NUM_CLASSES = 6           # 5 object classes + background
IMAGES_PER_BATCH = 4
IMG_H, IMG_W = 600, 800   # the model's transform resizes to min_size=800
MAX_OBJECTS = 12
NUM_ITERS = 5


class RandomInstances(Dataset):
    def __len__(self):
        return IMAGES_PER_BATCH * NUM_ITERS

    def __getitem__(self, idx):
        img = torch.rand(3, IMG_H, IMG_W)
        n = int(torch.randint(3, MAX_OBJECTS + 1, (1,)))
        x1 = torch.randint(0, IMG_W - 120, (n,)).float()
        y1 = torch.randint(0, IMG_H - 120, (n,)).float()
        w = torch.randint(30, 120, (n,)).float()
        h = torch.randint(30, 120, (n,)).float()
        boxes = torch.stack([x1, y1, x1 + w, y1 + h], dim=1)
        masks = torch.zeros(n, IMG_H, IMG_W, dtype=torch.uint8)
        for k in range(n):
            a, b, c, d = boxes[k].long().tolist()
            masks[k, b:d, a:c] = 1
        target = {
            "boxes": boxes,
            "labels": torch.randint(1, NUM_CLASSES, (n,), dtype=torch.int64),
            "masks": masks,
        }
        return img, target


def collate_fn(batch):
    return tuple(zip(*batch))


def main():
    device = torch.device("cuda")
    model = torchvision.models.detection.maskrcnn_resnet50_fpn(weights=None, weights_backbone=None,
                                                               num_classes=NUM_CLASSES)
    model.to(device)

    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.SGD(params, lr=0.02, momentum=0.9, weight_decay=1e-4)
    data_loader = DataLoader(RandomInstances(), batch_size=IMAGES_PER_BATCH, shuffle=True, num_workers=2,
                             collate_fn=collate_fn)

    model.train()
    for it, (images, targets) in enumerate(data_loader):
        images = [img.to(device) for img in images]
        targets = [{k: v.to(device) for k, v in t.items()} for t in targets]

        loss_dict = model(images, targets)
        losses = sum(loss for loss in loss_dict.values())
        loss_value = losses.item()
        if not math.isfinite(loss_value):
            print(f"Loss is {loss_value}, stopping training")
            print(loss_dict)
            break

        optimizer.zero_grad()
        losses.backward()
        optimizer.step()
        print(it, {k: round(v.item(), 3) for k, v in loss_dict.items()})


if __name__ == "__main__":
    main()
