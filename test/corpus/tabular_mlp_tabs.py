"""Churn prediction MLP on the telco CSV (tab-indented, as exported from the old notebook)."""
import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from torch.utils.data import DataLoader, TensorDataset

df = pd.read_csv("telco_churn.csv")
y = (df.pop("Churn") == "Yes").astype(np.float32).values
df = pd.get_dummies(df.drop(columns=["customerID"]), drop_first=True).astype(np.float32)
X_train, X_val, y_train, y_val = train_test_split(df.values, y, test_size=0.2, stratify=y, random_state=0)
scaler = StandardScaler().fit(X_train)
X_train, X_val = scaler.transform(X_train), scaler.transform(X_val)

device = "cuda" if torch.cuda.is_available() else "cpu"
train_dl = DataLoader(TensorDataset(torch.tensor(X_train), torch.tensor(y_train)), batch_size=256, shuffle=True)
val_dl = DataLoader(TensorDataset(torch.tensor(X_val), torch.tensor(y_val)), batch_size=1024)

model = nn.Sequential(
    nn.Linear(X_train.shape[1], 128), nn.ReLU(), nn.Dropout(0.2),
    nn.Linear(128, 64), nn.ReLU(), nn.Dropout(0.2),
    nn.Linear(64, 1),
).to(device)
pos_weight = torch.tensor([(1 - y_train.mean()) / y_train.mean()], device=device)
criterion = nn.BCEWithLogitsLoss(pos_weight=pos_weight)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-5)


def evaluate(loader):
	model.eval()
	total = 0.0
	probs, labels = [], []
	for xb, yb in loader:
		xb, yb = xb.to(device), yb.to(device)
		logits = model(xb).squeeze(1)  # expect: OOM104
		total += criterion(logits, yb)  # expect: OOM102
		probs.append(torch.sigmoid(logits).detach().cpu())
		labels.append(yb.cpu())
	auc = roc_auc_score(torch.cat(labels).numpy(), torch.cat(probs).numpy())
	return total.item() / len(loader), auc


for epoch in range(40):
	model.train()
	for xb, yb in train_dl:
		xb, yb = xb.to(device), yb.to(device)
		# optimizer.zero_grad()
		loss = criterion(model(xb).squeeze(1), yb)
		loss.backward()
		optimizer.step()  # expect: OOM103
	val_loss, val_auc = evaluate(val_dl)
	print(f"epoch {epoch:02d}  val_loss={val_loss:.4f}  auc={val_auc:.4f}")
