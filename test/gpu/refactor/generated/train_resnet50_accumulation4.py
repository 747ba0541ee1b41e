"""ResNet-50 (torchvision, random init) written as stem, list of bottleneck blocks and head, trained a few steps."""
import os

import torch
import torch.nn as nn
import torchvision


class ResNet50(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        base = torchvision.models.resnet50(num_classes=num_classes)
        self.stem = nn.Sequential(base.conv1, base.bn1, base.relu, base.maxpool)
        self.blocks = nn.ModuleList([*base.layer1, *base.layer2, *base.layer3, *base.layer4])
        self.head = nn.Sequential(base.avgpool, nn.Flatten(), base.fc)

    def forward(self, x):
        x = self.stem(x)
        for block in self.blocks:
            x = block(x)
        return self.head(x)


steps = int(os.environ.get("STEPS", "16"))
device = os.environ.get("DEVICE", "cuda")
image_size = int(os.environ.get("IMAGE_SIZE", "224"))
batch_size = 16
torch.manual_seed(0)

model = ResNet50().to(device)
model.train()
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

# The class is written into the images (a brighter image per class), so the loss can fall within a few steps.
labels = torch.randint(0, 10, (256,), device=device)
images = torch.randn(256, 3, image_size, image_size, device=device) + labels.view(-1, 1, 1, 1) * 0.2
losses = []

accumulation_steps = 4  # effective batch size: 16 x 4 = 64 samples per optimizer step
micro_step = 0
for step in range(steps):
    start = (step * batch_size) % len(images)
    x, y = images[start:start + batch_size], labels[start:start + batch_size]
    if micro_step % accumulation_steps == 0:
        optimizer.zero_grad()
    logits = model(x)
    loss = criterion(logits, y)
    (loss / accumulation_steps).backward()
    micro_step += 1
    if micro_step % accumulation_steps == 0:
        optimizer.step()
    losses.append(loss.item())
if micro_step % accumulation_steps != 0:
    for group in optimizer.param_groups:
        for p in group["params"]:
            if p.grad is not None:
                p.grad.mul_(accumulation_steps / (micro_step % accumulation_steps))
    optimizer.step()
