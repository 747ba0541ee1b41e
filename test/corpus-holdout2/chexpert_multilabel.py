"""Multi-label chest X-ray classification (CheXpert-small), DenseNet-121, macro AUROC."""
import argparse
import os

import pandas as pd
import torch
import torch.nn as nn
import torchvision
import torchvision.transforms as T
from PIL import Image
from sklearn.metrics import roc_auc_score
from torch.utils.data import DataLoader, Dataset

TASKS = ["Atelectasis", "Cardiomegaly", "Consolidation", "Edema", "Pleural Effusion"]


class CheXpert(Dataset):
    def __init__(self, csv_path, root, tf):
        df = pd.read_csv(csv_path)
        self.paths = df["Path"].tolist()
        self.labels = torch.tensor(df[TASKS].fillna(0).replace(-1, 1).values, dtype=torch.float32)
        self.root = root
        self.tf = tf

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        img = Image.open(os.path.join(self.root, self.paths[i])).convert("RGB")
        return self.tf(img), self.labels[i]


@torch.no_grad()
def evaluate(model, loader, criterion):
    model.eval()
    all_logits = torch.empty(0, len(TASKS), device="cuda")
    all_targets = torch.empty(0, len(TASKS))
    total_loss = 0.0
    for step, (images, targets) in enumerate(loader):
        images = images.cuda(non_blocking=True)
        logits = model(images)
        total_loss += criterion(logits, targets.cuda()) * images.size(0)
        all_logits = torch.cat([all_logits, logits.detach()])  # expect: OOM117
        all_targets = torch.cat([all_targets, targets.cpu()])
        if step % 10 == 0:
            torch.cuda.empty_cache()  # expect: OOM106
    probs = all_logits.sigmoid().cpu().numpy()
    aucs = [roc_auc_score(all_targets[:, k].numpy(), probs[:, k]) for k in range(len(TASKS))]
    model.train()
    return sum(aucs) / len(aucs), (total_loss / len(loader.dataset)).item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default="data/")
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--batch_size", type=int, default=32)
    args = ap.parse_args()

    tf = T.Compose([T.Resize((320, 320)), T.ToTensor(), T.Normalize([0.5] * 3, [0.25] * 3)])
    train_ds = CheXpert(os.path.join(args.root, "CheXpert-v1.0-small/train.csv"), args.root, tf)
    valid_ds = CheXpert(os.path.join(args.root, "CheXpert-v1.0-small/valid.csv"), args.root, tf)
    train_loader = DataLoader(train_ds, batch_size=args.batch_size, shuffle=True, num_workers=8, pin_memory=True)
    valid_loader = DataLoader(valid_ds, batch_size=64, num_workers=8, pin_memory=True)

    model = torchvision.models.densenet121(weights="IMAGENET1K_V1")
    model.classifier = nn.Linear(model.classifier.in_features, len(TASKS))
    model = model.cuda()
    criterion = nn.BCEWithLogitsLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4, betas=(0.9, 0.999))

    for epoch in range(args.epochs):
        model.train()
        for step, (images, targets) in enumerate(train_loader):
            images, targets = images.cuda(non_blocking=True), targets.cuda(non_blocking=True)
            loss = criterion(model(images), targets)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if step % 500 == 0:
                auc, vloss = evaluate(model, valid_loader, criterion)
                print(f"epoch {epoch} step {step}: train loss {loss.item():.4f} val loss {vloss:.4f} AUROC {auc:.4f}")


if __name__ == "__main__":
    main()
