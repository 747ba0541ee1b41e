"""ResNeSt-50d (timm) classifier: a short training run, then validation.

DELIBERATE LEAK: validate() runs without torch.no_grad() and sums the loss *tensors*
(`running_loss += loss` instead of `loss.item()`), so the running sum references the autograd graph of
every validation batch; all their saved activations stay on the GPU until validation ends.
"""
import timm
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

MODEL = "resnest50d"
NUM_CLASSES = 100
IMG = 224
TRAIN_BS = 64
VAL_BS = 32
TRAIN_STEPS = 4
VAL_BATCHES = 5


def validate(model, loader, criterion, device):
    model.eval()
    running_loss = 0.0
    correct = 0
    for x, y in loader:                      # no torch.no_grad() here
        x, y = x.to(device), y.to(device)
        out = model(x)
        loss = criterion(out, y)
        running_loss += loss                 # keeps the graph of every batch alive
        correct += (out.argmax(1) == y).sum().item()
        print(f"val batch: allocated {torch.cuda.memory_allocated() / 2**30:.2f} GiB")
    return running_loss / len(loader), correct / len(loader.dataset)


def main():
    device = torch.device("cuda")
    model = timm.create_model(MODEL, pretrained=False, num_classes=NUM_CLASSES).to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4, nesterov=True)

    train_ds = TensorDataset(torch.randn(TRAIN_BS * TRAIN_STEPS, 3, IMG, IMG),
                             torch.randint(0, NUM_CLASSES, (TRAIN_BS * TRAIN_STEPS,)))
    val_ds = TensorDataset(torch.randn(VAL_BS * VAL_BATCHES, 3, IMG, IMG),
                           torch.randint(0, NUM_CLASSES, (VAL_BS * VAL_BATCHES,)))
    train_loader = DataLoader(train_ds, batch_size=TRAIN_BS, shuffle=True)
    val_loader = DataLoader(val_ds, batch_size=VAL_BS)

    model.train()
    for step, (x, y) in enumerate(train_loader):
        x, y = x.to(device), y.to(device)
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"train step {step}: {loss.item():.4f}")

    val_loss, val_acc = validate(model, val_loader, criterion, device)
    print(f"val loss {val_loss.item():.4f} acc {val_acc:.3f}")


if __name__ == "__main__":
    main()
