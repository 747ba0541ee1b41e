import pandas as pd
import numpy as np
import torch
import torch.nn as nn
from sklearn.metrics import roc_auc_score
from torch.utils.data import DataLoader, Dataset
from PIL import Image
import torchvision.transforms as transforms
import timm

EPOCHS = 8
LR = 2e-4
IMG = 256
device = "cuda"

df = pd.read_csv("data/train.csv")
train_df = df[df.fold != 0].reset_index(drop=True)
valid_df = df[df.fold == 0].reset_index(drop=True)


class MelanomaDataset(Dataset):
    def __init__(self, df, tf):
        self.df = df
        self.tf = tf

    def __len__(self):
        return len(self.df)

    def __getitem__(self, i):
        row = self.df.iloc[i]
        img = Image.open(f"data/jpeg/train/{row.image_name}.jpg").convert("RGB")
        return self.tf(img), torch.tensor(row.target, dtype=torch.float32)


train_tf = transforms.Compose([transforms.RandomResizedCrop(IMG, scale=(0.7, 1.0)), transforms.RandomHorizontalFlip(),
                               transforms.ToTensor()])
valid_tf = transforms.Compose([transforms.Resize((IMG, IMG)), transforms.ToTensor()])
train_loader = DataLoader(MelanomaDataset(train_df, train_tf), batch_size=32, shuffle=True, num_workers=4)
valid_loader = DataLoader(MelanomaDataset(valid_df, valid_tf), batch_size=64, shuffle=False, num_workers=4)

model = timm.create_model("efficientnet_b0", pretrained=True, num_classes=1).to(device)
criterion = nn.BCEWithLogitsLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=LR)

best_auc = 0
for epoch in range(EPOCHS):
    model.train()
    epoch_loss = 0
    train_logits = []
    train_targets = []
    for x, y in train_loader:
        x, y = x.to(device), y.to(device)
        logits = model(x).squeeze(1)
        loss = criterion(logits, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        epoch_loss = epoch_loss + loss  # expect: OOM102
        train_logits += [logits]  # expect: OOM101
        train_targets.append(y.cpu())
    train_auc = roc_auc_score(torch.cat(train_targets).numpy(),
                              torch.cat(train_logits).sigmoid().detach().cpu().numpy())

    model.eval()
    val_preds = torch.tensor([], device=device)
    with torch.no_grad():
        for x, y in valid_loader:
            out = model(x.to(device)).squeeze(1)
            val_preds = torch.cat((val_preds, out.sigmoid()), 0)  # expect: OOM117
    val_auc = roc_auc_score(valid_df.target.values, val_preds.cpu().numpy())
    print(f"epoch {epoch}: loss {epoch_loss.item() / len(train_loader):.4f} train auc {train_auc:.4f} val auc {val_auc:.4f}")
    if val_auc > best_auc:
        best_auc = val_auc
        torch.save(model.state_dict(), "best_fold0.pth")
