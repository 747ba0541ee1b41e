"""A small classifier training script with the habits that make PyTorch runs die with CUDA out of memory.

Run `oomguard check examples/` to see what OOM Guard reports here.
"""
import os

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

os.environ["CUDA_VISIBLE_DEVICES"] = "0"  # pins every run to GPU 0

device = "cuda" if torch.cuda.is_available() else "cpu"


class Classifier(nn.Module):
    def __init__(self, in_features=512, hidden=2048, classes=10):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(in_features, hidden), nn.ReLU(), nn.Linear(hidden, classes))

    def forward(self, x):
        return self.body(x)


def evaluate(model, loader):
    model.eval()
    all_logits = []
    for x, _ in loader:
        logits = model(x.to(device))  # no torch.no_grad(): every batch records a graph
        all_logits.append(logits)  # ... and keeps it alive
    return torch.cat(all_logits)


def main():
    data = TensorDataset(torch.randn(4096, 512), torch.randint(0, 10, (4096,)))
    train_loader = DataLoader(data, batch_size=256, shuffle=True)
    val_loader = DataLoader(data, batch_size=256)
    model = Classifier().to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    losses = []
    for epoch in range(3):
        model.train()
        running_loss = 0.0
        for x, y in train_loader:
            x, y = x.to(device), y.to(device)
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()  # gradients are never cleared
            losses.append(loss)  # keeps each step's graph
            running_loss += loss  # and so does this sum
        print(f"epoch {epoch}: loss {running_loss / len(train_loader):.4f}")
        evaluate(model, val_loader)


if __name__ == "__main__":
    main()
