"""5-fold cross-validation of a tabular MLP: a fresh model and optimizer are built for every fold
(the previous fold's model is simply overwritten by the new one)."""
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Subset, TensorDataset

N_ROWS = 60_000
N_NUM = 180
N_CAT = 20
CAT_CARD = 1000
EMB_DIM = 16
IN_DIM = N_NUM + N_CAT * EMB_DIM
HIDDEN = 4096
N_LAYERS = 4
N_CLASSES = 9
BATCH_SIZE = 8192
N_FOLDS = 5
EPOCHS_PER_FOLD = 1
LR = 2e-3


class TabularMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.embs = nn.ModuleList([nn.Embedding(CAT_CARD, EMB_DIM) for _ in range(N_CAT)])
        layers, d = [], IN_DIM
        for _ in range(N_LAYERS):
            layers += [nn.Linear(d, HIDDEN), nn.BatchNorm1d(HIDDEN), nn.SiLU(), nn.Dropout(0.2)]
            d = HIDDEN
        layers.append(nn.Linear(d, N_CLASSES))
        self.mlp = nn.Sequential(*layers)

    def forward(self, x_num, x_cat):
        e = [emb(x_cat[:, i]) for i, emb in enumerate(self.embs)]
        return self.mlp(torch.cat([x_num] + e, dim=1))


x_num = torch.randn(N_ROWS, N_NUM)
x_cat = torch.randint(0, CAT_CARD, (N_ROWS, N_CAT))
y = torch.randint(0, N_CLASSES, (N_ROWS,))
dataset = TensorDataset(x_num, x_cat, y)
folds = np.array_split(np.random.permutation(N_ROWS), N_FOLDS)
device = "cuda"
scores = []

for k in range(N_FOLDS):
    val_idx = folds[k]
    train_idx = np.concatenate([f for j, f in enumerate(folds) if j != k])
    train_loader = DataLoader(Subset(dataset, train_idx), batch_size=BATCH_SIZE, shuffle=True, drop_last=True)
    val_loader = DataLoader(Subset(dataset, val_idx), batch_size=BATCH_SIZE * 2)

    model = TabularMLP().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=LR)
    criterion = nn.CrossEntropyLoss()

    for epoch in range(EPOCHS_PER_FOLD):
        model.train()
        for xn, xc, yy in train_loader:
            xn, xc, yy = xn.to(device), xc.to(device), yy.to(device)
            loss = criterion(model(xn, xc), yy)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

    model.eval()
    correct = 0
    with torch.no_grad():
        for xn, xc, yy in val_loader:
            pred = model(xn.to(device), xc.to(device)).argmax(1).cpu()
            correct += (pred == yy).sum().item()
    scores.append(correct / len(val_idx))
    print(f"fold {k}: last train loss {loss.item():.4f}, val acc {scores[-1]:.4f}")

print(f"CV accuracy {np.mean(scores):.4f} +- {np.std(scores):.4f}")
print("peak GiB", torch.cuda.max_memory_allocated() / 2 ** 30)
