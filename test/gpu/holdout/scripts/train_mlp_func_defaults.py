"""Wide MLP on tabular features (click-through style), plain SGD.

Everything is a keyword default of main() so a sweep can call main(hidden=4096, ...).
"""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def build_mlp(in_dim, hidden, depth, out_dim, dropout=0.1):
    layers = []
    d = in_dim
    for _ in range(depth):
        layers += [nn.Linear(d, hidden), nn.BatchNorm1d(hidden), nn.ReLU(), nn.Dropout(dropout)]
        d = hidden
    layers.append(nn.Linear(d, out_dim))
    return nn.Sequential(*layers)


def main(batch_size=2048, in_dim=1024, hidden=8192, depth=6, num_classes=1000, lr=0.05, steps=5):
    device = "cuda"
    model = build_mlp(in_dim, hidden, depth, num_classes).to(device)
    print(model)

    X = torch.randn(batch_size * steps, in_dim)
    y = torch.randint(0, num_classes, (batch_size * steps,))
    loader = DataLoader(TensorDataset(X, y), batch_size=batch_size, shuffle=True, drop_last=True)

    opt = torch.optim.SGD(model.parameters(), lr=lr)
    loss_fn = nn.CrossEntropyLoss()

    model.train()
    for i, (xb, yb) in enumerate(loader):
        xb, yb = xb.cuda(non_blocking=True), yb.cuda(non_blocking=True)
        opt.zero_grad()
        loss = loss_fn(model(xb), yb)
        loss.backward()
        opt.step()
        print(i, round(loss.item(), 4))


if __name__ == "__main__":
    main()
