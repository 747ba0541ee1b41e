"""Graph classification on PROTEINS with a 3-layer GIN (PyTorch Geometric)."""
import argparse

import torch
import torch.nn.functional as F
from torch.nn import BatchNorm1d, Linear, ReLU, Sequential
from torch_geometric.datasets import TUDataset
from torch_geometric.loader import DataLoader
from torch_geometric.nn import GINConv, global_add_pool


class GIN(torch.nn.Module):
    def __init__(self, in_channels, hidden, out_channels, num_layers=3):
        super().__init__()
        self.convs = torch.nn.ModuleList()
        for i in range(num_layers):
            mlp = Sequential(Linear(in_channels if i == 0 else hidden, hidden), BatchNorm1d(hidden), ReLU(),
                             Linear(hidden, hidden), ReLU())
            self.convs.append(GINConv(mlp, train_eps=True))
        self.lin1 = Linear(hidden * num_layers, hidden)
        self.lin2 = Linear(hidden, out_channels)

    def forward(self, x, edge_index, batch):
        xs = []
        for conv in self.convs:
            x = conv(x, edge_index)
            xs.append(global_add_pool(x, batch))
        h = torch.cat(xs, dim=1)
        h = F.relu(self.lin1(h))
        h = F.dropout(h, p=0.5, training=self.training)
        return self.lin2(h)


parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=100)
parser.add_argument("--hidden", type=int, default=64)
parser.add_argument("--lr", type=float, default=0.01)
args = parser.parse_args()

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
dataset = TUDataset("data/TUDataset", name="PROTEINS").shuffle()
n = len(dataset) // 10
test_dataset, val_dataset, train_dataset = dataset[:n], dataset[n:2 * n], dataset[2 * n:]
train_loader = DataLoader(train_dataset, batch_size=64, shuffle=True)
val_loader = DataLoader(val_dataset, batch_size=128)
test_loader = DataLoader(test_dataset, batch_size=128)

model = GIN(dataset.num_features, args.hidden, dataset.num_classes).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=50, gamma=0.5)


def train():
    model.train()
    total_loss = 0
    for data in train_loader:
        data = data.to(device)
        optimizer.zero_grad()
        out = model(data.x, data.edge_index, data.batch)
        loss = F.cross_entropy(out, data.y)
        loss.backward()
        optimizer.step()
        total_loss += loss * data.num_graphs  # expect: OOM102
    return total_loss.item() / len(train_loader.dataset)


def test(loader):
    model.eval()
    correct = 0
    for data in loader:
        data = data.to(device)
        out = model(data.x, data.edge_index, data.batch)  # expect: OOM104
        pred = out.argmax(dim=-1)
        correct += int((pred == data.y).sum())
    return correct / len(loader.dataset)


best_val, final_test = 0.0, 0.0
for epoch in range(1, args.epochs + 1):
    loss = train()
    val_acc = test(val_loader)
    test_acc = test(test_loader)
    scheduler.step()
    if val_acc > best_val:
        best_val, final_test = val_acc, test_acc
    print(f"Epoch {epoch:03d} loss {loss:.4f} val {val_acc:.4f} test {test_acc:.4f}")
print(f"best val {best_val:.4f} -> test {final_test:.4f}")
