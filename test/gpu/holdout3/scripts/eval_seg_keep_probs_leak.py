"""Fine-tune LR-ASPP MobileNetV3 on (synthetic) VOC-style crops, then evaluate mIoU.

NOTE: evaluate() keeps every batch's full softmax map on the GPU and concatenates them at the end (it was
written for a 50-image val split). Memory grows by 16 x 21 x 512 x 512 x 4 bytes (~352 MB) per eval batch, and the
final torch.cat needs the same again -- this is the known leak; it is deliberate here.
"""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset
from torchvision.models import segmentation

NUM_CLASSES = 21
CROP = 512
TRAIN_BS = 8
EVAL_BS = 16
TRAIN_STEPS = 4
EVAL_BATCHES = 10
IGNORE = 255


class FakeVOC(Dataset):
    def __init__(self, n, crop):
        self.n, self.crop = n, crop

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        img = torch.randn(3, self.crop, self.crop)
        mask = torch.randint(0, NUM_CLASSES, (self.crop, self.crop))
        mask[:8] = IGNORE   # border pixels
        return img, mask


def train_one_epoch(model, loader, optimizer, criterion, device, max_steps):
    model.train()
    for step, (img, mask) in enumerate(loader):
        if step == max_steps:
            break
        img, mask = img.to(device), mask.to(device)
        out = model(img)["out"]
        loss = criterion(out, mask)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"train step {step}: {loss.item():.4f}")


@torch.no_grad()
def evaluate(model, loader, device, max_batches):
    model.eval()
    all_probs, all_masks = [], []
    for i, (img, mask) in enumerate(loader):
        if i == max_batches:
            break
        probs = model(img.to(device))["out"].softmax(dim=1)
        all_probs.append(probs)              # stays on the GPU (leak)
        all_masks.append(mask.to(device))
    probs = torch.cat(all_probs)
    masks = torch.cat(all_masks)
    pred = probs.argmax(1)
    valid = masks != IGNORE
    hist = torch.bincount(NUM_CLASSES * masks[valid] + pred[valid], minlength=NUM_CLASSES ** 2)
    hist = hist.view(NUM_CLASSES, NUM_CLASSES).float()
    iou = hist.diag() / (hist.sum(0) + hist.sum(1) - hist.diag()).clamp(min=1)
    return iou.mean().item()


def main():
    device = torch.device("cuda")
    model = segmentation.lraspp_mobilenet_v3_large(weights=None, weights_backbone=None, num_classes=NUM_CLASSES)
    model.to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    criterion = nn.CrossEntropyLoss(ignore_index=IGNORE)

    train_loader = DataLoader(FakeVOC(TRAIN_BS * TRAIN_STEPS, CROP), batch_size=TRAIN_BS, shuffle=True,
                              num_workers=2)
    val_loader = DataLoader(FakeVOC(EVAL_BS * EVAL_BATCHES, CROP), batch_size=EVAL_BS, num_workers=2)

    train_one_epoch(model, train_loader, optimizer, criterion, device, TRAIN_STEPS)
    miou = evaluate(model, val_loader, device, EVAL_BATCHES)
    print(f"mIoU {miou:.4f}; peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
