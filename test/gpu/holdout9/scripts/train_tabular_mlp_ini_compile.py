"""Churn prediction MLP on numeric + categorical columns; settings in an INI file; torch.compile'd."""
import configparser
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

cp = configparser.ConfigParser()
cp.read("configs/churn_mlp.ini")

N_NUMERIC = cp.getint("data", "n_numeric")
CARDS = [int(c) for c in cp.get("data", "cat_cardinalities").split(",")]
EMB_DIM = cp.getint("data", "emb_dim")
N_ROWS = cp.getint("data", "n_rows")
HIDDEN = [int(h) for h in cp.get("model", "hidden_sizes").split(",")]
DROPOUT = cp.getfloat("model", "dropout")
COMPILE = cp.getboolean("model", "compile")
BATCH_SIZE = cp.getint("train", "batch_size")
EPOCHS = cp.getint("train", "epochs")


class ChurnMLP(nn.Module):
    def __init__(self, n_numeric, cards, emb_dim, hidden, dropout):
        super().__init__()
        self.embs = nn.ModuleList([nn.Embedding(c, emb_dim) for c in cards])
        self.num_bn = nn.BatchNorm1d(n_numeric)
        layers = []
        d = n_numeric + emb_dim * len(cards)
        for h in hidden:
            layers += [nn.Linear(d, h), nn.BatchNorm1d(h), nn.ReLU(inplace=True), nn.Dropout(dropout)]
            d = h
        self.mlp = nn.Sequential(*layers)
        self.out = nn.Linear(d, 1)

    def forward(self, x_num, x_cat):
        feats = [self.num_bn(x_num)] + [emb(x_cat[:, i]) for i, emb in enumerate(self.embs)]
        return self.out(self.mlp(torch.cat(feats, dim=1))).squeeze(1)


def make_data(n):
    x_num = torch.randn(n, N_NUMERIC)
    x_cat = torch.stack([torch.randint(0, c, (n,)) for c in CARDS], dim=1)
    y = (x_num[:, 0] + 0.5 * torch.randn(n) > 0).float()
    return TensorDataset(x_num, x_cat, y)


def main():
    device = "cuda"
    model = ChurnMLP(N_NUMERIC, CARDS, EMB_DIM, HIDDEN, DROPOUT).to(device)
    if COMPILE:
        model = torch.compile(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=cp.getfloat("train", "lr"),
                                momentum=cp.getfloat("train", "momentum"),
                                nesterov=cp.getboolean("train", "nesterov"),
                                weight_decay=cp.getfloat("train", "weight_decay"))
    loss_fn = nn.BCEWithLogitsLoss()
    loader = DataLoader(make_data(N_ROWS), batch_size=BATCH_SIZE, shuffle=True, pin_memory=True, drop_last=True)

    t0 = time.time()
    for epoch in range(EPOCHS):
        model.train()
        running = 0.0
        for x_num, x_cat, y in loader:
            x_num, x_cat, y = x_num.to(device, non_blocking=True), x_cat.to(device), y.to(device)
            optimizer.zero_grad(set_to_none=True)
            loss = loss_fn(model(x_num, x_cat), y)
            loss.backward()
            optimizer.step()
            running += loss.item()
        print(f"epoch {epoch} loss {running / len(loader):.4f} ({time.time() - t0:.1f}s)")
    print(f"peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
