"""5-fold CV for a tabular MLP (Otto-style multiclass) with early stopping and OOF predictions."""
import argparse
import copy
import os

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from sklearn.metrics import log_loss
from sklearn.model_selection import StratifiedKFold
from sklearn.preprocessing import QuantileTransformer

PARAMS = dict(hidden=512, dropout=0.25, lr=2e-3, wd=1e-5, bs=1024, max_epochs=200, patience=12, seed=42)


class MLP(nn.Module):
    def __init__(self, d_in, n_out, hidden, dropout):
        super().__init__()
        self.net = nn.Sequential(
            nn.BatchNorm1d(d_in), nn.Linear(d_in, hidden), nn.SiLU(), nn.Dropout(dropout),
            nn.Linear(hidden, hidden), nn.SiLU(), nn.Dropout(dropout), nn.Linear(hidden, n_out))

    def forward(self, x):
        return self.net(x)


def batches(X, y, bs, shuffle):
    idx = torch.randperm(len(X)) if shuffle else torch.arange(len(X))
    for i in range(0, len(X), bs):
        j = idx[i:i + bs]
        yield X[j], (y[j] if y is not None else None)


def train_epoch(model, opt, X, y, bs, loss_fn):
    model.train()
    tot = 0.0
    for xb, yb in batches(X, y, bs, shuffle=True):
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(xb), yb)
        loss.backward()
        opt.step()
        tot += loss.item() * len(xb)
    return tot / len(X)


def validate(model, X, y, bs, loss_fn):
    model.eval()
    val_loss = 0.0
    for xb, yb in batches(X, y, bs, shuffle=False):
        pred = model(xb)  # expect: OOM104
        val_loss += loss_fn(pred, yb) * len(xb)  # expect: OOM102
    return val_loss.item() / len(X)


@torch.no_grad()
def predict_proba(model, X, bs):
    model.eval()
    out = [model(xb).softmax(1) for xb, _ in batches(X, None, bs, shuffle=False)]
    return torch.cat(out).cpu().numpy()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", default="data/train.csv")
    ap.add_argument("--gpu", default="0")
    ap.add_argument("--folds", type=int, default=5)
    args = ap.parse_args()
    os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu
    torch.manual_seed(PARAMS["seed"])
    dev = torch.device("cuda")

    df = pd.read_csv(args.train)
    feats = [c for c in df.columns if c.startswith("feat_")]
    y_all = df["target"].str.replace("Class_", "").astype(int).values - 1
    X_all = QuantileTransformer(output_distribution="normal").fit_transform(df[feats].values).astype(np.float32)
    n_cls = int(y_all.max()) + 1

    oof = np.zeros((len(df), n_cls), dtype=np.float32)
    fold_scores = []
    skf = StratifiedKFold(n_splits=args.folds, shuffle=True, random_state=PARAMS["seed"])
    for fold, (tr, va) in enumerate(skf.split(X_all, y_all)):
        Xtr, ytr = torch.tensor(X_all[tr], device=dev), torch.tensor(y_all[tr], device=dev)
        Xva, yva = torch.tensor(X_all[va], device=dev), torch.tensor(y_all[va], device=dev)
        model = MLP(len(feats), n_cls, PARAMS["hidden"], PARAMS["dropout"]).to(dev)
        opt = torch.optim.AdamW(model.parameters(), lr=PARAMS["lr"], weight_decay=PARAMS["wd"])
        sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=4)
        loss_fn = nn.CrossEntropyLoss()

        best, best_state, bad = float("inf"), None, 0
        for epoch in range(PARAMS["max_epochs"]):
            tr_loss = train_epoch(model, opt, Xtr, ytr, PARAMS["bs"], loss_fn)
            va_loss = validate(model, Xva, yva, PARAMS["bs"], loss_fn)
            sched.step(va_loss)
            if va_loss < best - 1e-5:
                best, bad = va_loss, 0
                best_state = copy.deepcopy(model.state_dict())
            else:
                bad += 1
                if bad >= PARAMS["patience"]:
                    print(f"fold {fold}: early stop at epoch {epoch} (train {tr_loss:.4f})")
                    break
        model.load_state_dict(best_state)
        oof[va] = predict_proba(model, Xva, PARAMS["bs"] * 4)
        fold_scores.append(log_loss(y_all[va], oof[va]))
        print(f"fold {fold}: best val {best:.5f} | sklearn logloss {fold_scores[-1]:.5f}")

    print(f"CV logloss {np.mean(fold_scores):.5f} +- {np.std(fold_scores):.5f}")
    print(f"OOF logloss {log_loss(y_all, oof):.5f}")
    np.save("oof_mlp.npy", oof)


if __name__ == "__main__":
    main()
