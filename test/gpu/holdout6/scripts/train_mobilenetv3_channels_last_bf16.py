"""MobileNetV3-Large trained fully in bf16 (weights too) with channels_last tensors."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
import torchvision

BATCH_SIZE = 512
IMAGE_SIZE = 224
NUM_CLASSES = 1000
LR = 0.2
WARMUP_STEPS = 3
TOTAL_STEPS = 10


class SyntheticImageNet(Dataset):
    def __len__(self):
        return BATCH_SIZE * TOTAL_STEPS

    def __getitem__(self, i):
        return torch.randn(3, IMAGE_SIZE, IMAGE_SIZE), i % NUM_CLASSES


model = torchvision.models.mobilenet_v3_large(num_classes=NUM_CLASSES)
model = model.to(device="cuda", dtype=torch.bfloat16, memory_format=torch.channels_last)

optimizer = torch.optim.SGD(model.parameters(), lr=LR, momentum=0.9, nesterov=True, weight_decay=1e-5)
warmup = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=0.1, total_iters=WARMUP_STEPS)
cosine = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=TOTAL_STEPS - WARMUP_STEPS)
scheduler = torch.optim.lr_scheduler.SequentialLR(optimizer, [warmup, cosine], milestones=[WARMUP_STEPS])

loader = DataLoader(SyntheticImageNet(), batch_size=BATCH_SIZE, num_workers=4, pin_memory=True, drop_last=True)

model.train()
for step, (images, labels) in enumerate(loader):
    images = images.to("cuda", dtype=torch.bfloat16, non_blocking=True).contiguous(memory_format=torch.channels_last)
    labels = labels.to("cuda", non_blocking=True)
    logits = model(images)
    loss = F.cross_entropy(logits.float(), labels, label_smoothing=0.1)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    scheduler.step()
    if step % 2 == 0:
        print(f"step {step:3d}  loss {loss.item():.4f}  lr {scheduler.get_last_lr()[0]:.4f}")
