"""Tabular regression/classification with a plain MLP (click-through-ish features, synthetic)."""
import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

N_FEATURES = 512
HIDDEN = [4096, 4096, 2048, 1024]
N_CLASSES = 2
BATCH_SIZE = 16384
EPOCHS = 3
BATCHES_PER_EPOCH = 2
DROPOUT = 0.2


def build_mlp(in_dim, hidden, out_dim, dropout):
    layers = []
    d = in_dim
    for h in hidden:
        layers += [nn.Linear(d, h), nn.BatchNorm1d(h), nn.ReLU(), nn.Dropout(dropout)]
        d = h
    layers.append(nn.Linear(d, out_dim))
    return nn.Sequential(*layers)


class TabularData(Dataset):
    def __init__(self, n):
        self.X = np.random.randn(n, N_FEATURES).astype("float32")
        self.y = np.random.randint(0, N_CLASSES, size=n).astype("int64")

    def __len__(self):
        return len(self.X)

    def __getitem__(self, idx):
        return self.X[idx], self.y[idx]


def run():
    device = "cuda"
    model = build_mlp(N_FEATURES, HIDDEN, N_CLASSES, DROPOUT).to(device)
    opt = torch.optim.Adamax(model.parameters(), lr=2e-3)
    loss_fn = nn.CrossEntropyLoss()

    data = TabularData(BATCH_SIZE * BATCHES_PER_EPOCH)
    loader = DataLoader(data, batch_size=BATCH_SIZE, shuffle=True, drop_last=True)

    for epoch in range(EPOCHS):
        model.train()
        running = 0.0
        for xb, yb in loader:
            xb = xb.to(device)
            yb = yb.to(device)
            # keep the .grad tensors allocated between steps (old habit from a profiling session)
            opt.zero_grad(set_to_none=False)
            loss = loss_fn(model(xb), yb)
            loss.backward()
            opt.step()
            running += loss.item()
        print(f"epoch {epoch + 1}/{EPOCHS} loss={running / len(loader):.4f}")


if __name__ == "__main__":
    run()
