import glob
import os

import pandas as pd
import torch
import torch.nn as nn
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from torchvision import models, transforms

DATA_DIR = "data/faces"
BATCH_SIZE = 64
EPOCHS = 10
LR = 1e-3

tfm = transforms.Compose([
    transforms.Resize((224, 224)),
    transforms.ToTensor(),
    transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]),
])


class FaceDataset(Dataset):
    def __init__(self, root, csv_file, transform=None):
        self.files = sorted(glob.glob(os.path.join(root, "*.jpg")))
        df = pd.read_csv(csv_file).set_index("image_id")
        self.labels = [df.loc[os.path.basename(f), "Smiling"] for f in self.files]
        self.transform = transform

    def __len__(self):
        return len(self.files)

    def __getitem__(self, idx):
        img = Image.open(self.files[idx]).convert("RGB")
        if self.transform:
            img = self.transform(img)
        # move to GPU here so the training loop is simpler
        img = img.cuda()  # expect: OOM112
        label = torch.tensor(int(self.labels[idx] > 0)).cuda()
        return img, label


train_set = FaceDataset(os.path.join(DATA_DIR, "train"), os.path.join(DATA_DIR, "attrs.csv"), tfm)
val_set = FaceDataset(os.path.join(DATA_DIR, "val"), os.path.join(DATA_DIR, "attrs.csv"), tfm)
train_loader = DataLoader(train_set, batch_size=BATCH_SIZE, shuffle=True, num_workers=4)
val_loader = DataLoader(val_set, batch_size=BATCH_SIZE, shuffle=False, num_workers=4)

model = models.mobilenet_v3_small(weights="IMAGENET1K_V1")
model.classifier[3] = nn.Linear(model.classifier[3].in_features, 2)
model = model.cuda()
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=LR)

for epoch in range(EPOCHS):
    model.train()
    total, correct, running = 0, 0, 0.0
    for imgs, labels in train_loader:
        out = model(imgs)
        loss = criterion(out, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        running += loss.item() * imgs.size(0)
        correct += (out.argmax(1) == labels).sum().item()
        total += imgs.size(0)
    print(f"epoch {epoch}: train loss {running / total:.4f} acc {correct / total:.3f}")

    model.eval()
    with torch.no_grad():
        val_correct = sum((model(x).argmax(1) == y).sum().item() for x, y in val_loader)
    print(f"           val acc {val_correct / len(val_set):.3f}")
