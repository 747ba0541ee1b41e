# Flowers-102 with a MobileNetV2 (width 1.4) trained from scratch.
# Everything is configured by the constants below; the data is random tensors shaped like the real thing.
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torchvision import models

NUM_CLASSES = 102
WIDTH_MULT = 1.4
BASE_RES = 32
IMAGE_SIZE = BASE_RES * 6          # 192 px crops
BATCH_SIZE = 2 ** 7
EPOCHS = 2
STEPS_PER_EPOCH = 4
BASE_LR = 0.045
LR = BASE_LR * BATCH_SIZE / 256    # linear scaling rule
MOMENTUM = 0.9
WEIGHT_DECAY = 4e-5
EVAL_BATCHES = 2

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

# ---- data -----------------------------------------------------------------
n_train = BATCH_SIZE * STEPS_PER_EPOCH
train_x = torch.randn(n_train, 3, IMAGE_SIZE, IMAGE_SIZE)
train_y = torch.randint(0, NUM_CLASSES, (n_train,))
val_x = torch.randn(BATCH_SIZE * EVAL_BATCHES, 3, IMAGE_SIZE, IMAGE_SIZE)
val_y = torch.randint(0, NUM_CLASSES, (BATCH_SIZE * EVAL_BATCHES,))

train_loader = DataLoader(TensorDataset(train_x, train_y), batch_size=BATCH_SIZE, shuffle=True, drop_last=True)
val_loader = DataLoader(TensorDataset(val_x, val_y), batch_size=BATCH_SIZE)

# ---- model ----------------------------------------------------------------
model = models.mobilenet_v2(weights=None, num_classes=NUM_CLASSES, width_mult=WIDTH_MULT)
model.to(device)

criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM, nesterov=True,
                            weight_decay=WEIGHT_DECAY)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.98)

# ---- train ----------------------------------------------------------------
for epoch in range(EPOCHS):
    model.train()
    start = time.time()
    running = 0.0
    for step, (x, y) in enumerate(train_loader):
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        out = model(x)
        loss = criterion(out, y)
        loss.backward()
        optimizer.step()
        running += loss.item()
    scheduler.step()

    # validation
    model.eval()
    correct = 0
    total = 0
    all_preds = []
    with torch.no_grad():
        for x, y in val_loader:
            x, y = x.to(device), y.to(device)
            preds = model(x).argmax(dim=1)
            all_preds.append(preds.cpu())
            correct += (preds == y).sum().item()
            total += y.numel()
    print(f"epoch {epoch}: train loss {running / (step + 1):.3f} val acc {correct / total:.3f} "
          f"({time.time() - start:.1f}s)")

print("max memory allocated: %.2f GiB" % (torch.cuda.max_memory_allocated() / 1024 ** 3))
