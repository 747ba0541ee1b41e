"""Fine-tune a ResNet-50 on a 10-class dataset.

The real run reads an ImageFolder; for the smoke test we feed random tensors of the same shape.
"""
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torchvision import models

# ---------------- hyper-parameters ----------------
BATCH_SIZE = 64
IMAGE_SIZE = 224
NUM_CLASSES = 10
EPOCHS = 1
LR = 0.1
MOMENTUM = 0.9
WEIGHT_DECAY = 1e-4
NUM_TRAIN_BATCHES = 5  # synthetic stand-in for the dataset length
PRINT_EVERY = 2

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

# fake "ImageFolder"
train_images = torch.randn(BATCH_SIZE * NUM_TRAIN_BATCHES, 3, IMAGE_SIZE, IMAGE_SIZE)
train_labels = torch.randint(0, NUM_CLASSES, (BATCH_SIZE * NUM_TRAIN_BATCHES,))
train_loader = DataLoader(
    TensorDataset(train_images, train_labels),
    batch_size=BATCH_SIZE,
    shuffle=True,
    drop_last=True,
    pin_memory=True,
)

model = models.resnet50(weights=None, num_classes=NUM_CLASSES)
model = model.to(device)

criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM, weight_decay=WEIGHT_DECAY)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=30, gamma=0.1)

for epoch in range(EPOCHS):
    model.train()
    running_loss = 0.0
    correct = 0
    seen = 0
    t0 = time.time()
    for i, (inputs, targets) in enumerate(train_loader):
        inputs = inputs.to(device, non_blocking=True)
        targets = targets.to(device, non_blocking=True)

        optimizer.zero_grad()
        outputs = model(inputs)
        loss = criterion(outputs, targets)
        loss.backward()
        optimizer.step()

        running_loss += loss.item()
        correct += (outputs.argmax(dim=1) == targets).sum().item()
        seen += targets.size(0)
        if i % PRINT_EVERY == 0:
            print(f"[epoch {epoch}] iter {i:4d}  loss {loss.item():.4f}")
    scheduler.step()
    print(f"epoch {epoch}: loss {running_loss / (i + 1):.4f} acc {correct / seen:.3f} ({time.time() - t0:.1f}s)")

print("done")
